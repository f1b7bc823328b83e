"""A session (-p here; the REPL opens its Runtime the same way) takes its board from the same
precedence as the commands: a repository's "board" is named at start and the run stays on the
workdir's files; a --board the host cannot open stops the run before anything is written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support.cli import run_scripted

from agent_cli.cli import main

URL = "postgresql://ann:s3cret@db.example/team"
SCRIPT = {"lead": [{"text": "Hello."}] * 4}


def test_a_cloned_repositorys_board_is_named_and_the_run_stays_on_files(workdir: Path,
                                                                        tmp_path: Path) -> None:
    (workdir / ".agent-cli").mkdir()
    (workdir / ".agent-cli" / "settings.json").write_text(json.dumps({"board": URL}))
    proc = run_scripted(workdir, SCRIPT, "hi", "--trust-project-settings",
                        home=tmp_path / "home")
    assert proc.returncode == 0, proc.stderr  # no database was tried: files, as ever
    assert '.agent-cli/settings.json: "board" (postgresql://ann:***@db.example/team) is not ' \
           "used" in proc.stderr
    assert "s3cret" not in proc.stderr + proc.stdout


def test_a_board_without_its_backend_stops_the_run_before_anything_is_written(
        workdir: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "agent_cli.pg.stores", None)  # not installed
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    code = main(["-C", str(workdir), "--board", URL, "--model", f"script:{script}", "-p", "hi"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "pip install 'agent-cli[postgres]'" in err and "s3cret" not in err
    assert list(workdir.iterdir()) == []
