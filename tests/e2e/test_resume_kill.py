"""SIGKILL a headless run while its teammates work, then `agent-cli -c -p "carry on" --wait`.

Twenty rounds on one workdir with the offline demo model (deterministic, real tool calls):
each round starts `-p "Create 3 tasks ... spawn alice and bob" --wait`, kills it once both
teammates are running, and continues the session. After every continue all tasks are
completed; across all rounds every task was completed exactly once (events.jsonl), no inbox
message reached a model twice (the transcripts), and no state file is corrupt (`tasks
doctor`, the roster, the sessions).

The kill is driven by events, never by the machine's speed: one of the three tasks runs
`python --version`, and the `python` the runs find first on PATH is a gate this test holds
shut until the kill. So the first run cannot finish before it is killed, and the moment of
the kill is random among the states between "both spawned" and "a teammate waits in the
gated command" (a random pause after the spawn, or the gate reached). The gate opens before
the continue, which then finishes the gated task too.

Runs are forked from a "zygote" process that imported agent-cli once, so a round costs its
work rather than an interpreter start-up; the demo's typing pace is shortened. Set
AGENT_CLI_SLOW=1 for 60 rounds.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from support.python_gate import PythonGate

from agent_cli.board.store import TaskBoard
from agent_cli.team.liveness import pid_ended
from agent_cli.team.roster import Roster
from agent_cli.team.sessions import SessionStore

ROUNDS = 60 if os.environ.get("AGENT_CLI_SLOW") else 20
RUN = ["--model", "demo", "--permission-mode", "acceptEdits",
       "--allow", "Bash(python --version)", "--timeout", "60"]
TASKS = 3
PROMPT = "Create 3 tasks on the board, then spawn alice and bob. Watch them auto-claim."
RESULT_RE = re.compile(r'type=\\?"result\\?">task #(\d+) \(')

ZYGOTE = r"""
import json, os, sys, tempfile, traceback
from pathlib import Path
from agent_cli import cli
import agent_cli.agent.agent, agent_cli.models.demo, agent_cli.team.manager
import agent_cli.team.resume, agent_cli.team.team_tools, agent_cli.ui.headless
from agent_cli.board.store import TaskBoard
from agent_cli.team.mailbox import Mailbox
from agent_cli.team.roster import Roster
agent_cli.models.demo.DemoModel.__init__.__defaults__ = (0.002,)  # its typing pace, shorter
with tempfile.TemporaryDirectory() as d:  # build the pydantic models once, here
    b = TaskBoard(Path(d) / ".tasks"); b.create("warm-up")
    t = b.claim_next("w").task; b.complete(t.id, "w", t.claim_token)
    m = Mailbox(Path(d) / ".team"); m.send("a", "b", "x"); m.fetch("b")
    Roster(Path(d) / ".team").add("w", "r")
print("ready", flush=True)
for line in sys.stdin:
    req = json.loads(line)
    if "wait" in req:
        _, status = os.waitpid(req["wait"], 0)
        print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)
        continue
    pid = os.fork()
    if pid == 0:
        fd = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1); os.dup2(fd, 2)
        null = os.open(os.devnull, os.O_RDONLY); os.dup2(null, 0)
        try:
            code = cli.main(req["argv"])
        except BaseException:
            traceback.print_exc(); code = 99
        sys.stdout.flush(); sys.stderr.flush()
        os._exit(code)
    print(json.dumps({"pid": pid}), flush=True)
"""


class Zygote:
    """A process that forks `agent-cli` runs on request (see the module docstring)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", ZYGOTE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self._read() == "ready"

    def _read(self) -> str:
        line = self.proc.stdout.readline()
        assert line, "the zygote died"
        return line.strip()

    def _ask(self, req: dict) -> dict:
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return json.loads(self._read())

    def start(self, argv: list[str], log: Path) -> int:
        return self._ask({"argv": argv, "log": str(log)})["pid"]

    def wait(self, pid: int) -> int:
        return self._ask({"wait": pid})["code"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(30)


def wait_for(pred, timeout: float, what: str) -> None:
    """Wait for a condition another process makes true (checked every 5 ms)."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not pred():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        pause.wait(0.005)


def both_spawned(store: SessionStore, before: set[str], pid: int) -> bool:
    new = [s for s in store.all() if s.id not in before]
    return bool(new and len(new[0].team) == 2) or pid_ended(pid)


def check_transcripts(team_dir: Path) -> None:
    """No inbox message reached a model twice, and every transcript reads cleanly."""
    from agent_cli.agent.transcript import read_records

    lead_ids: list[str] = []
    results: Counter[int] = Counter()
    for path in sorted((team_dir / "transcripts").rglob("*.jsonl")):
        records, problems = read_records(path)
        assert problems == [], problems
        ids = [i for r in records for i in r.get("delivered", [])]
        if path.name == "lead.jsonl":
            lead_ids += ids
            for r in records:
                if r.get("kind") == "message" and r["message"]["role"] == "user":
                    results.update(int(n) for n in RESULT_RE.findall(json.dumps(r["message"])))
        else:
            assert len(ids) == len(set(ids)), f"{path.name}: a message taken in twice"
    assert len(lead_ids) == len(set(lead_ids)), "the lead took a message in twice"
    assert results and max(results.values()) == 1, f"results seen twice: {results}"


def test_sigkill_then_continue_finishes_every_task_exactly_once(workdir, tmp_path, monkeypatch):
    rng = random.Random(1212)
    store = SessionStore(workdir / ".team")
    gate = PythonGate(tmp_path)
    monkeypatch.setenv("PATH", gate.path_with(os.environ["PATH"]))
    zygote = Zygote()
    killed = 0
    try:
        for r in range(ROUNDS):
            before = {s.id for s in store.all()}
            gate.close()
            log = tmp_path / f"run{r}.log"
            pid = zygote.start(["-C", str(workdir), *RUN, "-p", PROMPT, "--wait"], log)
            wait_for(lambda b=before, p=pid: both_spawned(store, b, p), 30, "alice and bob")
            if rng.random() < 0.5:  # the moment of the kill: a random pause after the spawn,
                threading.Event().wait(rng.uniform(0, 0.3))
            else:  # or a teammate waiting in the gated command
                wait_for(lambda p=pid: gate.reached.exists() or pid_ended(p), 30, "the gate")
            assert not pid_ended(pid), f"round {r}: the run ended with the gate shut\n" \
                + log.read_text()
            os.kill(pid, signal.SIGKILL)
            code = zygote.wait(pid)
            killed += code == -signal.SIGKILL
            assert code in (0, -signal.SIGKILL), log.read_text()
            gate.open()
            log = tmp_path / f"continue{r}.log"
            pid = zygote.start(["-C", str(workdir), *RUN, "-c", "-p", "carry on", "--wait"], log)
            assert zygote.wait(pid) == 0, log.read_text()
            tasks = TaskBoard(workdir / ".tasks").snapshot().tasks
            assert len(tasks) == TASKS * (r + 1)
            left = [(t.id, t.status, t.owner) for t in tasks if t.status != "completed"]
            assert left == [], f"round {r}: {left}\n{log.read_text()}"
    finally:
        zygote.close()

    board = TaskBoard(workdir / ".tasks")
    log_events = board.events()
    done = Counter(e["task_id"] for e in log_events if e["action"] == "completed")
    assert done == Counter(range(1, TASKS * ROUNDS + 1))  # every task exactly once
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from soak_checks import replay_events

    assert replay_events(log_events)[2] == []
    assert board.doctor() == [] and board.event_problems() == []
    assert Roster(workdir / ".team").snapshot().problem is None
    assert len(store.all()) == ROUNDS  # each continue took its session up, none was lost
    check_transcripts(workdir / ".team")
    assert killed == ROUNDS  # every run really died with its teammates at work
