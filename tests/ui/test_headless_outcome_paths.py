"""The headless outcome follows the README's definition on every path: a task created or
claimed during the run (also by a teammate a `-c` run resumed, also one a resumed teammate
still held) that is not completed makes the run `unfinished` -- a shutdown or a release
does not make it disappear."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

from support.team import Call, Reply, make_runtime

from agent_cli import cli as cli_mod
from agent_cli.models.scripted import ScriptedModel
from agent_cli.team.resume import start_session
from agent_cli.team.roster import this_host
from agent_cli.team.sessions import SessionStore
from agent_cli.ui.headless import run_headless

BOARD_PROMPT = "Create 3 tasks on the board, then spawn alice and bob. Watch them auto-claim."


def cli(workdir: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_mod.main(["-C", str(workdir), "--model", "demo", "--timeout", "60", *argv])
    return code, out.getvalue(), err.getvalue()


def events(workdir: Path) -> list[dict]:
    path = workdir / ".tasks" / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def headless(rt, prompt: str) -> tuple[dict, int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_headless(rt, Namespace(prompt=prompt, wait=True, timeout=30,
                                      output_format="json"), out=out, err=err)
    return json.loads(out.getvalue()), code, err.getvalue()


def told_lead_once(request) -> Reply:
    """A teammate that tells the lead it is stuck, then stops (it reported: no reminders)."""
    last = request.messages[-1]
    if any(getattr(b, "type", "") == "tool_result" for b in last.content):
        return Reply("Waiting for the lead.")
    return Reply(tool_calls=[Call("send_message", {"to": "lead", "content": "stuck"})])


def test_a_continued_run_counts_what_its_resumed_teammates_claimed(workdir):
    """The issue's walk: the first run leaves tasks denied; `-c "Shut down alice"` resumes
    alice and bob, who claim them again and are stopped: that is no completed run."""
    code, _, _ = cli(workdir, "-p", BOARD_PROMPT, "--wait")
    assert code == 1  # headless, nobody approved the write and the command
    before = len(events(workdir))
    code, out, err = cli(workdir, "-c", "-p", "Shut down alice", "--wait",
                         "--output-format", "json")
    report = json.loads(out)
    claimed = {e["task_id"] for e in events(workdir)[before:] if e["action"] == "claimed"}
    assert claimed, "the resumed teammates claimed nothing"
    assert (report["outcome"], code) == ("unfinished", 1), err
    assert claimed <= {u["id"] for u in report["unfinished"]}
    assert all(t["status"] == "pending" for t in report["tasks"] if t["id"] in claimed)
    assert "agent-cli: unfinished #" in err


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_task_a_resumed_teammate_held_counts_when_its_shutdown_releases_it(workdir, cleanup):
    first = make_runtime(workdir, ScriptedModel({}), session="new", lease_s=600)
    start_session(first, "headless")
    first.board.create("half-done work", description="finish the report")
    held = first.board.claim_next("alice").task
    first.roster.add("alice", "writer", model=None, require_plan=False)
    first.roster.update("alice", pid=_dead_pid(), host=this_host(), status="working",
                        current_task=held.id)
    SessionStore(workdir / ".team").note_member(first.session, "alice")
    # ... the first process dies holding the task; the second one continues the session.
    model = ScriptedModel(
        {"lead": [Reply(tool_calls=[Call("request_shutdown", {"name": "alice"})]),
                  Reply("Asked alice to stop.")],
         "alice": [told_lead_once, told_lead_once]},
        responder=lambda request: Reply("Noted."))
    rt = make_runtime(workdir, model, session="continue", lease_s=600)
    cleanup(rt)
    start_session(rt, "headless", defer=True)  # as the command line does
    report, code, err = headless(rt, "Shut down alice")
    assert [e["action"] for e in rt.board.events()] == ["created", "claimed", "released"]
    assert (report["outcome"], code) == ("unfinished", 1)
    [undone] = report["unfinished"]
    assert (undone["id"], undone["status"]) == (held.id, "pending")
    assert undone["reason"].startswith("released by alice (shutdown)")
    assert f'agent-cli: unfinished #{held.id} "half-done work" (pending' in err


def test_a_task_released_during_the_run_stays_unfinished_and_says_who_released_it(
        workdir, cleanup):
    lead = [Reply(tool_calls=[Call("create_task", {"subject": "say hello",
                                                   "description": "run echo"}),
                              Call("spawn_teammate", {"name": "alice", "role": "dev"})]),
            Reply("alice is on it."),
            Reply(tool_calls=[Call("request_shutdown", {"name": "alice"})]),
            Reply("alice is stopping.")]
    model = ScriptedModel({"lead": lead, "alice": [told_lead_once, told_lead_once]},
                          responder=lambda request: Reply("Noted."))
    rt = make_runtime(workdir, model)
    cleanup(rt)
    report, code, err = headless(rt, "go")
    actions = [(e["action"], e.get("details", {}).get("reason")) for e in rt.board.events()]
    assert actions == [("created", None), ("claimed", None), ("released", "shutdown")]
    assert (report["outcome"], code) == ("unfinished", 1)
    [undone] = report["unfinished"]
    assert undone["reason"] == "released by alice (shutdown); no teammate left to claim it"
