"""The README's seven demo prompts typed in order into one REPL session, as a newcomer does:
each prompt's tasks go to the teammates its walkthrough names (teammates idle from earlier
prompts cannot take them), spawning a teammate that already runs is no failure, and every
closing text reports only what happened (who holds what comes from the board)."""

from __future__ import annotations

import re

from support.readme import readme_prompts
from support.repl_harness import Harness
from support.team import WAIT, Recorder

from agent_cli.app import open_runtime
from agent_cli.models.demo import DemoModel
from agent_cli.models.demo.intents import parse_intent
from agent_cli.runtime import RuntimeConfig

ALLOW = ["Bash(python --version)", "Bash(python fizzbuzz.py)", "Bash(python main.py)",
         "Write(*)"]
# scenario -> who the README says takes its tasks
TAKERS = {"board": {"alice", "bob"}, "coder": {"coder"}, "abc": {"alice", "bob"},
          "verify": {"reader", "reviewer"}, "plan": {"writer"}}
EVERYONE = {"alice", "bob", "coder", "reader", "reviewer", "writer"}
HOLDER_RE = re.compile(r"^- #(\d+) .*: (?:in progress|进行中) \(([a-z]+)\)$", re.MULTILINE)


def closing_of(rec: Recorder, seen: int) -> str:
    """The lead's last text of the turn that follows `seen` earlier texts."""
    texts = [e.text for e in rec.of("TextDone", agent="lead")][seen:]
    return next(t for t in reversed(texts) if t.startswith("(demo model)"))


def check_prompt(h: Harness, rec: Recorder, rt, prompt: str) -> None:
    scenario = parse_intent(prompt).scenario
    before = {t.id for t in rt.board.snapshot().tasks}
    seen = len(rec.of("TextDone", agent="lead"))
    marker = "看板现状" if parse_intent(prompt).lang == "zh" else "On the board now"
    h.command(prompt, marker)
    text = closing_of(rec, seen)
    new = [t.id for t in rt.board.snapshot().tasks if t.id not in before]

    def finished() -> bool:
        tasks = {t.id: t for t in rt.board.snapshot().tasks}
        return bool(new) and all(tasks[i].status == "completed" for i in new)

    rec.wait_for(finished, 60, f"the tasks of {prompt!r} completed")
    assert rt.team.wait_quiet(WAIT), f"the team never went quiet after {prompt!r}"
    claims = {(e["task_id"], e["actor"]) for e in rt.board.events() if e["action"] == "claimed"}
    takers = {who for task_id, who in claims if task_id in new}
    assert takers and takers <= TAKERS[scenario], (prompt, claims)
    # the closing text names who held what as the board said, and no bystander
    for task_id, owner in HOLDER_RE.findall(text):
        assert (int(task_id), owner) in claims, (prompt, text)
    own = re.split(r"What I did|我实际做了这些", text, maxsplit=1)[-1]  # after the inbox
    assert not {n for n in EVERYONE - TAKERS[scenario] if n in own}, (prompt, text)
    assert "Some steps failed" not in text and "有步骤失败" not in text, text
    assert "headless" not in text  # the REPL's advice: keys to press


def test_the_seven_prompts_in_one_session(workdir):
    (workdir / "NOTES.md").write_text("# Notes\n")
    rt = open_runtime(workdir, RuntimeConfig(model_factory=lambda a, s: DemoModel(pace_s=0),
                                             idle_timeout_s=0, allow=ALLOW))
    rec = Recorder(rt)
    h = Harness(rt).start()
    prompts = readme_prompts()
    try:
        for prompt in prompts[:6]:
            check_prompt(h, rec, rt, prompt)
        h.command(prompts[6], "alice    shut down")
        assert rt.team.teammate("alice").thread.join(WAIT) is None
    finally:
        h.quit()
        rt.close(5.0)
    assert h.exit_code == 0
    tasks = rt.board.snapshot().tasks
    assert all(t.status == "completed" for t in tasks) and len(tasks) == 15
    assert (workdir / "NOTES.md").read_text() == "# Notes\nReviewed by the team.\n"
    assert rt.roster.get("alice").status == "shutdown"
    # prompts 3 and 4 found alice and bob running: said as a fact, not as a failure
    spawned = [e.text for e in rec.of("Notice", agent="lead") if e.text.startswith("spawned")]
    idle = [e.reason for e in rec.of("StatusEvent", status="idle") if e.agent in ("alice", "bob")]
    assert any("for role 'coder'" in r for r in idle), idle  # prompt 2: why they left it
    assert spawned == ["spawned alice (generalist)", "spawned bob (generalist)",
                       "spawned coder (coder)", "spawned reader (checker)",
                       "spawned reviewer (checker)", "spawned writer (writer)"]
