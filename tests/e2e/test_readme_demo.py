"""The README's hands-on demo, run as a user would: each prompt is read from README.md itself
(the ```prompt blocks) and run headless with the demo model in a fresh workdir, then the board
and the team on disk and in the JSON report are checked. Prompt 7 (shut down alice) needs a
teammate that is running, so it is typed into one in-process REPL session after /spawn; so is
prompt 6 after prompt 5 (idle teammates must not take writer's task).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.readme import README, readme_prompts

from agent_cli.models.demo.intents import DEMO_PROMPTS, parse_intent

QUICK_START = ("pip install . && agent-cli", "pip install '.[test]' && python -m pytest")


def prompt_for(scenario: str) -> str:
    matches = [p for p in readme_prompts() if parse_intent(p).scenario == scenario]
    assert matches, f"README.md has no demo prompt for {scenario}"
    return matches[0]


def clean_env() -> dict[str, str]:
    """No credentials (the demo must not need any) and this interpreter's `python` first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.pop("AGENT_CLI_MODEL", None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def run_demo(workdir: Path, prompt: str, *allow: str) -> tuple[int, dict, str]:
    cmd = [sys.executable, "-m", "agent_cli", "-C", str(workdir), "--model", "demo",
           "-p", prompt, "--wait", "--timeout", "60", "--output-format", "json"]
    for rule in allow:
        cmd += ["--allow", rule]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), timeout=120)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        pytest.fail(f"no JSON report (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc.returncode, report, proc.stderr


def events(workdir: Path) -> list[dict]:
    path = workdir / ".tasks" / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def by_subject(report: dict) -> dict[str, dict]:
    return {t["subject"]: t for t in report["tasks"]}


def test_readme_keeps_the_quick_start_lines_and_lists_every_demo_prompt():
    text = README.read_text(encoding="utf-8")
    for line in QUICK_START:
        assert f"\n{line}\n" in text
    assert readme_prompts() == list(DEMO_PROMPTS)
    for heading in ("## Hands-on demo", "## Use Claude", "## Where to go next"):
        assert heading in text


REFERENCE = {  # the docs page the README links, and a heading it must hold
    "docs/permissions.md": "## Permissions", "docs/files.md": "## Files on disk",
    "docs/command-line.md": "## Command line", "docs/reliability.md": "## Reliability",
    "docs/sandbox.md": "## Sandbox", "docs/mcp.md": "## MCP servers",
    "docs/worktrees.md": "## Worktrees", "docs/memory-and-hooks.md": "## Hooks",
    "docs/watch.md": "## Watch the team work", "docs/ARCHITECTURE.md": "## Key interfaces",
    "docs/teams-across-machines.md": "## The flow",
    "docs/postgresql.md": "## A team on PostgreSQL",
}


def test_the_readme_links_every_reference_page_and_each_page_links_back():
    text = README.read_text(encoding="utf-8")
    root = README.parent
    for page, heading in REFERENCE.items():
        assert f"]({page})" in text, f"the README does not link {page}"
        body = (root / page).read_text(encoding="utf-8")
        assert heading in body, f"{page} lost its {heading!r} section"
        if page != "docs/ARCHITECTURE.md":
            assert "](../README.md)" in body


def test_every_readme_prompt_is_understood():
    assert all(parse_intent(p).scenario != "help" for p in readme_prompts())


def test_prompt_1_alice_and_bob_auto_claim_and_complete_three_tasks(workdir):
    code, report, err = run_demo(workdir, prompt_for("board"),
                                 "Bash(python --version)", "Write(*)")
    assert code == 0, err
    tasks = report["tasks"]
    assert len(tasks) == 3 and all(t["status"] == "completed" for t in tasks), tasks
    owners = [t["owner"] for t in tasks]
    assert set(owners) == {"alice", "bob"}, owners
    claims = {e["task_id"]: e["actor"] for e in events(workdir) if e["action"] == "claimed"}
    assert sorted(claims) == [t["id"] for t in tasks]
    assert report["result"].startswith("(demo model)")
    first = report["lead_turns"][0]["text"]  # headless: flags to pass, no keys to press
    assert "--allow 'RULE'" in first and "--permission-mode acceptEdits" in first
    assert "1 (yes)" not in first and "/tasks" not in first
    assert "On the board now (list_tasks):" in first


def test_prompt_4_c_is_completed_after_a_and_b(workdir):
    code, report, err = run_demo(workdir, prompt_for("abc"), "Write(*)")
    assert code == 0, err
    tasks = by_subject(report)
    a, b, c = (next(t for s, t in tasks.items() if s.startswith(x)) for x in ("A:", "B:", "C:"))
    assert all(t["status"] == "completed" and t["owner"] for t in (a, b, c))
    assert sorted(c["blockedBy"]) == sorted([a["id"], b["id"]])
    log = events(workdir)
    done_at = {e["task_id"]: i for i, e in enumerate(log) if e["action"] == "completed"}
    c_claimed = min(i for i, e in enumerate(log)
                    if e["action"] == "claimed" and e["task_id"] == c["id"])
    assert done_at[a["id"]] < c_claimed and done_at[b["id"]] < c_claimed < done_at[c["id"]]
    owners_of_c = {e["actor"] for e in log if e["action"] == "claimed" and e["task_id"] == c["id"]}
    assert owners_of_c == {c["owner"]}
    assert "part_a.txt: A is done." in c["result"]


@pytest.mark.parametrize("expected", ["42", "43"])
def test_prompt_5_verify_completes_only_when_the_output_matches(workdir, expected):
    (workdir / "expected.txt").write_text(expected + "\n")
    code, report, err = run_demo(workdir, prompt_for("verify"),
                                 "Bash(python main.py)", "Write(*)")
    assert code == (0 if expected == "42" else 1), err  # a check that fails is no success
    assert (workdir / "main.py").read_text() == "print(42)\n"  # created: it was absent
    assert (workdir / "expected.txt").read_text() == expected + "\n"  # never overwritten
    tasks = by_subject(report)
    assert tasks["source"]["status"] == tasks["expected"]["status"] == "completed"
    verify = tasks["verify"]
    if expected == "42":
        assert verify["status"] == "completed"
        assert "main.py prints 42" in verify["result"]
    else:  # held by its owner until the shutdown released it; the outcome says why
        assert (verify["status"], verify["owner"], verify["result"]) == ("pending", None, None)
        assert report["outcome"] == "unfinished"
        [undone] = report["unfinished"]
        assert undone["owner"] in {"reader", "reviewer"}
        assert undone["reason"] == "verify failed: expected stdout '43', got '42'"


def test_prompt_6_the_lead_approves_the_plan_and_the_denied_write_leaves_notes_md(workdir):
    (workdir / "NOTES.md").write_text("# Notes\n")
    code, report, err = run_demo(workdir, prompt_for("plan"))
    assert code == 1, err  # the write was denied: the task is not done
    # The plan reached the lead during --wait and was reviewed and approved by it...
    requests = json.loads((workdir / ".team" / "requests.json").read_text())
    text = json.dumps(requests)
    assert '"plan_approval"' in text and '"writer"' in text and '"approved"' in text
    assert any("review_plan" in t["text"] and "approved" in t["text"]
               for t in report["lead_turns"])
    # ...which widened nothing: the write still needed a human, and headless there is none.
    assert {(d["agent"], d["tool"], d["target"]) for d in report["denials"]} == {
        ("writer", "write_file", "NOTES.md")}
    assert (workdir / "NOTES.md").read_text() == "# Notes\n"
    (task,) = report["tasks"]
    assert (task["status"], task["owner"]) == ("pending", None)  # released at the shutdown
    assert (task["assignee"], task["require_plan"]) == ("writer", True)  # the JSON shows them
    [undone] = report["unfinished"]
    assert undone["owner"] == "writer" and "write_file was denied" in undone["reason"]
    writer = next(m for m in report["team"] if m["name"] == "writer")
    assert writer["require_plan"] is True
    # and the lead's last turn reports the denial writer sent it.
    assert "denied" in report["result"] and "writer" in report["result"]


def test_prompt_6_with_the_write_allowed_notes_md_gets_its_line(workdir):
    (workdir / "NOTES.md").write_text("# Notes\n")
    code, report, err = run_demo(workdir, prompt_for("plan"), "Write(NOTES.md)")
    assert code == 0, err
    assert report["denials"] == []
    (task,) = report["tasks"]
    assert (task["status"], task["owner"]) == ("completed", "writer")
    notes = (workdir / "NOTES.md").read_text()
    assert notes.startswith("# Notes\n") and len(notes.splitlines()) == 2


def test_prompt_2_coder_finds_and_completes_the_tasks_it_claimed(workdir):
    code, report, err = run_demo(workdir, prompt_for("coder"),
                                 "Write(fizzbuzz.py)", "Bash(python fizzbuzz.py)")
    assert code == 0, err
    assert [m["name"] for m in report["team"]] == ["coder"]
    tasks = report["tasks"]
    assert len(tasks) == 2 and tasks[1]["blockedBy"] == [tasks[0]["id"]]
    log = events(workdir)
    claims = [(e["task_id"], e["actor"], e["details"].get("via")) for e in log
              if e["action"] == "claimed"]
    # nobody assigned anything: coder found each task on the board by itself...
    assert claims == [(t["id"], "coder", "claim_next") for t in tasks]
    assert all(t["role"] == "coder" for t in tasks)  # no one idle from before may take them
    # ...and completed every task it claimed, the blocked one only after its blocker
    assert all((t["status"], t["owner"]) == ("completed", "coder") for t in tasks), tasks
    order = [(e["action"], e["task_id"]) for e in log if e["action"] in ("claimed", "completed")]
    first, second = (t["id"] for t in tasks)
    assert order == [("claimed", first), ("completed", first),
                     ("claimed", second), ("completed", second)]
    assert "FizzBuzz" in tasks[1]["result"]
    assert (workdir / "fizzbuzz.py").exists() and report["denials"] == []


def test_prompt_3_the_dependent_task_completes_after_its_dependencies(workdir):
    code, report, err = run_demo(workdir, prompt_for("abc"), "Write(*)")
    assert code == 0, err
    tasks = report["tasks"]
    free = [t for t in tasks if not t["blockedBy"]]
    (dependent,) = [t for t in tasks if t["blockedBy"]]
    assert sorted(dependent["blockedBy"]) == sorted(t["id"] for t in free) and len(free) == 2
    assert all(t["status"] == "completed" for t in tasks), tasks
    assert {t["owner"] for t in tasks} <= {"alice", "bob"}
    log = events(workdir)
    completed_at = {e["task_id"]: i for i, e in enumerate(log) if e["action"] == "completed"}
    dependent_claims = [i for i, e in enumerate(log)
                        if e["action"] == "claimed" and e["task_id"] == dependent["id"]]
    assert len(dependent_claims) == 1  # exactly one teammate took it, once
    assert max(completed_at[t["id"]] for t in free) < dependent_claims[0]
    assert dependent_claims[0] < completed_at[dependent["id"]]
    assert (workdir / "part_a.txt").exists() and (workdir / "part_b.txt").exists()


def test_prompt_7_shuts_down_a_running_alice_through_the_protocol(workdir):
    """A shutdown needs a running teammate, so this one runs in one REPL session (a headless
    run's teammates stop when its process ends): /spawn alice, then the README prompt."""
    from support.repl_harness import Harness

    from agent_cli.app import open_runtime
    from agent_cli.models.demo import DemoModel
    from agent_cli.runtime import RuntimeConfig

    rt = open_runtime(workdir, RuntimeConfig(model_factory=lambda a, s: DemoModel(pace_s=0),
                                             idle_timeout_s=0))
    h = Harness(rt).start()
    try:
        h.command("/spawn alice generalist", "spawned alice")
        h.screen.wait_for("alice    is idle")
        assert rt.team.running() == ["alice"]
        h.command(prompt_for("shutdown"), "alice    shut down")
        assert rt.team.teammate("alice").thread.join(30) is None
        assert rt.team.running() == []
        assert rt.roster.get("alice").status == "shutdown"
        (req,) = rt.protocols.load()  # the request the lead sent, answered by alice herself
        assert (req.kind, req.sender, req.target, req.status) == (
            "shutdown", "lead", "alice", "approved")
        out = h.command("/team", "Team")
        assert "alice" in out and "shutdown" in out
    finally:
        h.quit()
        rt.close(5.0)
    assert h.exit_code == 0


def test_prompt_6_after_prompt_5_in_one_session_goes_to_writer_with_her_plan(workdir):
    """The README in order in one REPL: after prompt 5, reader and reviewer sit idle; prompt 6's
    task is assigned to writer and requires a plan, so neither may take it. Run it twice: the
    second time writer is the idle one, and the new task needs a plan of its own."""
    from support.repl_harness import Harness
    from support.team import WAIT, Recorder

    from agent_cli.app import open_runtime
    from agent_cli.models.demo import DemoModel
    from agent_cli.runtime import RuntimeConfig

    (workdir / "NOTES.md").write_text("# Notes\n")
    rt = open_runtime(workdir, RuntimeConfig(
        model_factory=lambda a, s: DemoModel(pace_s=0), idle_timeout_s=0,
        allow=["Bash(python main.py)", "Write(*)"]))
    rec = Recorder(rt)
    h = Harness(rt).start()

    def all_done(n: int) -> bool:
        tasks = rt.board.snapshot().tasks
        return len(tasks) == n and all(t.status == "completed" for t in tasks)

    try:
        h.command(prompt_for("verify"), "Only a teammate with role checker may take")
        rec.wait_for(lambda: all_done(3), 60, "prompt 5's three tasks completed")
        rec.wait_for(lambda: all(rt.roster.get(n).status == "idle"
                                 for n in ("reader", "reviewer")), WAIT, "both idle")
        for run in (1, 2):
            h.command(prompt_for("plan"), "Only writer may take")
            rec.wait_for(lambda n=3 + run: all_done(n), 60, f"prompt 6 run {run} completed")
        out = h.command("/tasks", "Tasks")
        assert "@writer +plan" in out
    finally:
        h.quit()
        rt.close(5.0)
    assert h.exit_code == 0
    notes = rt.board.snapshot().tasks[3:]
    assert [(t.assignee, t.require_plan, t.owner) for t in notes] == [
        ("writer", True, "writer")] * 2
    claims = [(e["task_id"], e["actor"]) for e in rt.board.events() if e["action"] == "claimed"]
    assert [a for tid, a in claims if tid in (4, 5)] == ["writer", "writer"]  # nobody else
    idle = [e.reason for e in rec.of("StatusEvent", status="idle") if e.agent != "writer"]
    assert any("#4 is assigned to writer" in r for r in idle), idle
    plans_seen = [r for r in rt.protocols.load() if r.kind == "plan_approval"]
    assert [(r.sender, r.task_id, r.status) for r in plans_seen] == [
        ("writer", 4, "approved"), ("writer", 5, "approved")]  # one plan per task
    assert (workdir / "NOTES.md").read_text() == (
        "# Notes\nReviewed by the team.\nReviewed by the team.\n")
    assert [m.name for m in rt.roster.members()] == ["reader", "reviewer", "writer"]
