"""Sessions: every REPL or headless run is one; `-c` / `--resume ID` pick it up again — the
lead's conversation, every teammate not shut down (same name, role, model, plan setting,
transcript) and the tasks they still hold; `--resume` and `/resume` list them."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from support.team import Call, Recorder, Reply, last_user_text, make_runtime

from agent_cli import cli as cli_mod
from agent_cli.models.scripted import ScriptedModel
from agent_cli.team.resume import start_session
from agent_cli.team.roster import Roster, this_host
from agent_cli.team.sessions import SessionStore

BOARD_PROMPT = "Create 3 tasks on the board, then spawn alice and bob. Watch them auto-claim."
DEMO = ["--model", "demo", "--permission-mode", "acceptEdits",
        "--allow", "Bash(python --version)", "--timeout", "60"]


def run(workdir: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli_mod.main(["-C", str(workdir), *argv])
    return code, out.getvalue()


def members(workdir: Path) -> dict[str, str]:
    return {m.name: m.status for m in Roster(workdir / ".team").members()}


def test_continue_after_a_headless_run_resumes_alice_and_shuts_her_down(workdir):
    code, out = run(workdir, *DEMO, "-p", BOARD_PROMPT, "--wait")
    assert code == 0, out
    [session] = SessionStore(workdir / ".team").all()
    assert session.team == ["alice", "bob"] and sorted(session.suspended) == ["alice", "bob"]

    code, out = run(workdir, "--resume")
    assert code == 0
    assert session.id in out and "alice, bob" in out and "Create 3 tasks on the board" in out

    code, out = run(workdir, *DEMO, "-c", "-p", "Shut down alice", "--wait")
    assert code == 0, out
    assert "request_shutdown alice" in out
    assert "shutdown_response" not in out  # the first run's closing answers are not news
    assert members(workdir) == {"alice": "shutdown", "bob": "shutdown"}
    [again] = SessionStore(workdir / ".team").all()  # the same session, continued
    assert again.id == session.id and again.suspended == ["bob"]
    lead = [json.loads(x) for x in again.lead_transcript.read_text().splitlines()]
    said = [json.dumps(r["message"]) for r in lead
            if r["kind"] == "message" and r["message"]["role"] == "user"]
    assert any("Create 3 tasks" in s for s in said) and any("Shut down alice" in s for s in said)

    code, out = run(workdir, *DEMO, "--resume", session.id[:15], "-p", "Shut down bob", "--wait")
    assert code == 0 and "request_shutdown bob" in out
    [last] = SessionStore(workdir / ".team").all()
    assert last.suspended == []  # nobody left to resume
    code, out = run(workdir, *DEMO, "-c", "-p", "Shut down alice", "--wait")
    assert "request_shutdown alice: alice is not running" in out  # shut down stays down


def test_resume_refuses_what_it_cannot_do_in_one_line(workdir):
    code, out = run(workdir, "--model", "demo", "-c", "-p", "hi")
    assert code == 3 and out.count("\n") == 1 and "no session to continue" in out
    code, out = run(workdir, "--model", "demo", "--resume", "nope", "-p", "hi")
    assert code == 3 and "no session 'nope'" in out
    code, out = run(workdir, "--model", "demo", "-c", "--resume", "x", "-p", "hi")
    assert code == 2 and "not both" in out
    assert run(workdir, "--resume") == (0, "no sessions in this workdir yet\n")


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _crashed_session_holding_a_task(workdir):
    rt1 = make_runtime(workdir, ScriptedModel({}), session="new", lease_s=600)
    start_session(rt1, "repl")
    rt1.board.create("half-done work", description="finish the report")
    held = rt1.board.claim_next("alice").task
    rt1.roster.add("alice", "writer", model=None, require_plan=False)
    rt1.roster.update("alice", pid=_dead_pid(), host=this_host(), status="working",
                      current_task=held.id)
    SessionStore(workdir / ".team").note_member(rt1.session, "alice")
    # ... and the process dies here: no close, no shutdown, the lease still live
    return held


def test_a_resumed_teammate_goes_on_with_the_task_it_held_with_the_same_token(
    workdir, cleanup
):
    held = _crashed_session_holding_a_task(workdir)

    def resume_reply(request):
        text = last_user_text(request)
        assert f'<resumed-task id="{held.id}" claim_token="{held.claim_token}">' in text
        assert "You were interrupted" in text and "finish the report" in text
        return Reply(tool_calls=[Call("complete_task", {
            "task_id": held.id, "claim_token": held.claim_token, "result": "finished"})])

    model = ScriptedModel({"alice": [resume_reply, Reply("all done")]})
    rt2 = make_runtime(workdir, model, session="continue")
    cleanup(rt2)
    rec = Recorder(rt2)
    start_session(rt2, "headless")
    rec.wait_event("TaskEvent", action="completed", task_id=held.id)
    actions = [e["action"] for e in rt2.board.events()]
    assert actions == ["created", "claimed", "completed"]  # no expiry, no second claim
    member = rt2.roster.get("alice")
    assert member.role == "writer" and rt2.team.teammate("alice").alive()


def test_slash_resume_lists_the_sessions_and_names_this_one(workdir):
    from agent_cli.ui.slash import SlashContext, UiSettings, dispatch
    from agent_cli.ui.style import make_console

    rt = make_runtime(workdir, ScriptedModel({}), session="new")
    start_session(rt, "repl")
    buf = io.StringIO()
    lead = SimpleNamespace(agent=None, busy=False)
    ctx = SlashContext(make_console(buf, 120, False), rt, lead, UiSettings())
    assert dispatch(ctx, "/resume").ok
    text = buf.getvalue()
    assert rt.session.id in text and f"this session: {rt.session.id}" in text


def test_the_repl_takes_its_teammates_over_first_and_starts_them_once_it_can_ask(
    workdir, cleanup
):
    from agent_cli.team.resume import resume_pending
    from agent_cli.ui.startup import stale_tasks

    held = _crashed_session_holding_a_task(workdir)
    model = ScriptedModel({"alice": [Reply("looking"), Reply("still here")]})
    rt = make_runtime(workdir, model, session="continue")
    cleanup(rt)
    start_session(rt, "repl", defer=True)
    assert [m.name for m in rt.resuming] == ["alice"] and rt.team.running() == []
    assert stale_tasks(rt) == []  # not offered for release: alice is about to come back
    assert rt.board.get(held.id).owner == "alice"  # a board operation did not take it back
    rec = Recorder(rt)
    assert resume_pending(rt) == ["alice"]
    rec.wait_event("TurnFinished", agent="alice")
    assert "<resumed-task" in last_user_text(model.requests_for("alice")[0])
    assert resume_pending(rt) == []  # once


def test_planted_session_entries_are_skipped_not_followed(workdir, tmp_path):
    store = SessionStore(workdir / ".team")
    real = store.create("headless")
    store.note_member(real, "alice")  # not an empty session: -c would skip that one
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "session.json").write_text(json.dumps({"id": "20990101-000000000-abcd"}))
    (store.root / "20990101-000000000-abcd").symlink_to(elsewhere)
    (store.root / "20990101-000000001-abcd").mkdir()
    (store.root / "20990101-000000001-abcd" / "session.json").write_text("{not json")
    assert [s.id for s in store.all()] == [real.id]
    assert store.latest().id == real.id
