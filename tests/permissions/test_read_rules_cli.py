"""Read rules end to end: a headless run whose model tries every read tool on a secret, with
the deny rule from --deny or from a cloned repository's settings; project memory that
imports the secret does not carry it to the model either; an ask rule in the terminal."""

from __future__ import annotations

import json
import os

import pytest
from support.cli import run_scripted
from support.team import make_runtime

from agent_cli.models.scripted import ScriptedModel

SECRET = "s3cr3t-TOKEN-4711"
TRIES = [
    {"name": "read_file", "input": {"path": ".env"}},
    {"name": "read_file", "input": {"path": "docs/../.env"}},
    {"name": "read_file", "input": {"path": "link.txt"}},
    {"name": "grep", "input": {"pattern": "TOKEN"}},
    {"name": "grep", "input": {"pattern": "TOKEN", "path": "link.txt"}},
    {"name": "glob", "input": {"pattern": "**/*"}},
    {"name": "edit_file", "input": {"path": ".env", "old_string": "s3cr3t", "new_string": "x"}},
]


def _plant(workdir) -> None:
    (workdir / ".env").write_text(f"API_KEY={SECRET}\n", encoding="utf-8")
    (workdir / "docs").mkdir()
    (workdir / "docs" / "a.md").write_text("TOKEN is documented here\n", encoding="utf-8")
    os.symlink(".env", workdir / "link.txt")


def _everything_the_model_saw(workdir) -> str:
    parts = [p.read_text(encoding="utf-8", errors="replace")
             for p in (workdir / ".team" / "transcripts").rglob("*.jsonl")]
    return "\n".join(parts)


@pytest.mark.parametrize("where", ["flag", "project settings"])
def test_a_headless_run_never_sees_the_secret(workdir, where) -> None:
    _plant(workdir)
    extra: list[str] = []
    if where == "flag":
        extra = ["--deny", "Read(./.env)"]
    else:  # a cloned repository's deny rules apply without any question
        (workdir / ".agent-cli").mkdir()
        (workdir / ".agent-cli" / "settings.json").write_text(
            json.dumps({"permissions": {"deny": ["Read(./.env)"]}}), encoding="utf-8")
    script = {"lead": [{"text": "Looking.", "tool_calls": TRIES}, {"text": "Done."}]}
    proc = run_scripted(workdir, script, "look around", "--allow", "Edit", *extra)
    assert proc.returncode == 0, proc.stderr
    seen = _everything_the_model_saw(workdir)
    assert "docs/a.md:1: TOKEN is documented here" in seen  # the other files are read
    assert "Denied by rule Read(./.env)" in seen
    assert SECRET not in seen and SECRET not in proc.stdout + proc.stderr
    assert (workdir / ".env").read_text(encoding="utf-8") == f"API_KEY={SECRET}\n"


def test_project_memory_does_not_import_a_denied_file(workdir, cleanup) -> None:
    _plant(workdir)
    (workdir / "CLAUDE.md").write_text("Use the key:\n@.env\n@docs/a.md\n", encoding="utf-8")
    rt = make_runtime(workdir, ScriptedModel({}), deny=["Read(./.env)"])
    cleanup(rt)
    block = rt.memory.block()
    assert "TOKEN is documented here" in block and SECRET not in block
    assert any("withheld by permission rule Read(./.env)" in w for w in rt.memory.warnings)


def test_an_ask_rule_asks_in_the_terminal_and_only_a_yes_reads_the_secret(workdir) -> None:
    pexpect = pytest.importorskip("pexpect")
    from support.repl_spawn import spawn_repl

    _plant(workdir)
    (workdir / ".agent-cli").mkdir()
    (workdir / ".agent-cli" / "settings.json").write_text(
        json.dumps({"permissions": {"ask": ["Read(./.env)"]}}), encoding="utf-8")
    read = {"name": "read_file", "input": {"path": "link.txt"}}
    script = {"lead": [{"text": "Reading.", "tool_calls": [read]}, {"text": "Refused."},
                       {"text": "Again.", "tool_calls": [read]}, {"text": "Read it."}]}
    child = spawn_repl(workdir, script, timeout=30)
    try:
        child.expect("Ctrl-D exits")
        child.send("read the link\r")
        child.expect("wants to read")
        child.expect("link.txt")
        child.expect(r"asks because rule Read\(\./\.env\)")
        child.expect("Choose 1")
        child.send("3")
        child.expect("instead")
        child.send("\r")  # no words: just no
        child.expect("Refused.")
        assert SECRET not in _everything_the_model_saw(workdir)
        child.send("read it again\r")
        child.expect("wants to read")
        child.expect("Choose 1")
        child.send("1")
        child.expect("Read it.")
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert SECRET in _everything_the_model_saw(workdir)  # you said yes the second time
