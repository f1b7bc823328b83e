"""An empty session (a REPL opened and closed with nothing said and nobody spawned) is not
kept; one that never ended is skipped by `-c` and listed last by `--resume`."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from support.team import make_runtime

from agent_cli import cli as cli_mod
from agent_cli.models.scripted import ScriptedModel
from agent_cli.team.resume import start_session
from agent_cli.team.sessions import SessionStore


def run(workdir: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli_mod.main(["-C", str(workdir), *argv])
    return code, out.getvalue()


def open_session(workdir: Path):
    """A REPL's session as it opens: a runtime with a new session, nothing typed yet."""
    rt = make_runtime(workdir, ScriptedModel({}), session="new")
    start_session(rt, "repl", defer=True)
    return rt


def test_a_session_closed_with_nothing_done_is_not_recorded(workdir):
    rt = open_session(workdir)
    folder = rt.session.dir
    assert folder.is_dir()  # recorded while it runs (another process may ask about it)
    assert rt.close(5.0) == []
    assert not folder.exists()
    assert run(workdir, "--resume") == (0, "no sessions in this workdir yet\n")


def test_continue_skips_an_empty_session_and_the_list_shows_it_last(workdir):
    code, out = run(workdir, "--model", "demo", "-p", "hello")  # the lead answers: a session
    assert code == 0, out
    [used] = SessionStore(workdir / ".team").all()
    crashed = open_session(workdir)  # an empty REPL that never ended (killed, or still open)
    newest = crashed.session.id
    assert newest > used.id
    code, out = run(workdir, "--resume")
    rows = [line.split()[0] for line in out.splitlines()[1:-1]]
    assert rows == [used.id, newest]  # the empty one last, though it is newer
    code, out = run(workdir, "--model", "demo", "-c", "-p", "hello again")
    assert code == 0, out
    said = used.lead_transcript.read_text(encoding="utf-8")
    assert "hello again" in said  # -c went on with the session that did something
    assert not crashed.session.lead_transcript.exists()
    crashed.close(5.0)
