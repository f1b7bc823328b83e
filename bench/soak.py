"""Soak: many teammates, two command-line processes, one workdir; then prove nothing was lost.

    python bench/soak.py [--seconds N] [--tasks N] [--messages N] [--workdir DIR] [--json]

Eight teammate threads (one Runtime, a deterministic model per teammate) auto-claim and
complete tasks; the lead (this process) creates most tasks with random dependencies and reads
its inbox; process "tasks" runs `agent-cli tasks add/claim/complete` (cli.main in a loop, one
interpreter) and process "send" runs `agent-cli send` to the teammates. Each teammate's model
acknowledges messages and, for every task it completes, messages a random peer.

Afterwards (see soak_checks.py): every task completed exactly once, by its claimer; no orphan
in_progress; events.jsonl replays to the final board; `tasks doctor` is clean; every message
in a teammate's inbox was handed to that teammate's model exactly once (ids found in the NEW
user content of each request); every result message reached the lead once. Prints tasks/s,
messages/s, peak memory (ru_maxrss of this process and of its children).

The workdir defaults to a fresh directory on tmpfs (/dev/shm) when there is one: fsync costs
~5 ms on a VM disk, and the board serializes its writes, so the disk would be what is measured.
Pass --workdir to soak a real disk.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from soak_checks import check_all, inbox_lines_from  # noqa: E402

from agent_cli.models.base import (  # noqa: E402
    Message,
    ModelEvent,
    ModelRequest,
    ResponseDone,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

TEAMMATES = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi")
CLI_OWNER = "cliworker"
TOKEN_RE = re.compile(r"soak-msg ([a-z0-9]+:\d+)")
CLAIM_RE = re.compile(r'<auto-claimed-task id="(\d+)" claim_token="([0-9a-f]+)"')


@dataclass
class SoakConfig:
    seconds: float = 60.0
    tasks: int = 2000
    messages: int = 5000
    teammates: int = 8
    cli_add_share: float = 0.1  # part of the tasks created by `agent-cli tasks add`
    cli_claim_share: float = 0.025  # part claimed and completed by `agent-cli tasks claim`
    compact_threshold_tokens: int = 3000
    seed: int = 7
    workdir: Path | None = None


@dataclass
class SoakReport:
    tasks_created: int = 0
    tasks_completed: int = 0
    messages: int = 0
    lead_messages: int = 0
    elapsed_s: float = 0.0
    tasks_per_s: float = 0.0
    messages_per_s: float = 0.0
    peak_rss_mb: float = 0.0
    peak_rss_children_mb: float = 0.0
    compactions: int = 0
    finished: bool = False
    storage: str = ""
    violations: list[str] = field(default_factory=list)


# ----- the teammates' model ------------------------------------------------------------------
class SoakModel:
    """A Model whose reply is computed from the request: complete the auto-claimed task (and
    message a random peer), acknowledge messages, summarize when asked to compact."""

    name = "soak"

    def __init__(self, agent: str, peers: list[str], seed: int) -> None:
        self.agent = agent
        self.peers = [p for p in peers if p != agent]
        self.rng = random.Random(seed)
        self.seen: Counter[str] = Counter()  # message tokens handed to this model
        self.sent: list[str] = []
        self.compactions = 0
        self._calls = 0

    def stream(self, request: ModelRequest, cancel: threading.Event | None = None
               ) -> Iterator[ModelEvent]:
        self._calls += 1
        usage = Usage(input_tokens=_rough_tokens(request), output_tokens=12)
        if not request.tools:  # the compaction summarizer
            self.compactions += 1
            yield _done([TextBlock(text="Summary: soak work, nothing pending.")], usage)
            return
        text = _new_user_text(request)
        self.seen.update(TOKEN_RE.findall(text))
        claimed = CLAIM_RE.search(text)
        if claimed is None:
            yield _done([TextBlock(text="ack")], usage)
            return
        token = f"soak-msg {self.agent}:{len(self.sent)}"
        self.sent.append(token.split()[1])
        uses = [
            ToolUseBlock(id=f"toolu_{self.agent}_{self._calls}a", name="complete_task", input={
                "task_id": int(claimed.group(1)), "claim_token": claimed.group(2),
                "result": "done"}),
            ToolUseBlock(id=f"toolu_{self.agent}_{self._calls}b", name="send_message", input={
                "to": self.rng.choice(self.peers), "content": token}),
        ]
        for use in uses:
            yield ToolCall(use)
        yield _done(uses, usage, "tool_use")


def _done(blocks: list, usage: Usage, stop: str = "end_turn") -> ResponseDone:
    return ResponseDone(message=Message(role="assistant", content=blocks), stop_reason=stop,
                        usage=usage)


def _new_user_text(request: ModelRequest) -> str:
    """The text of the request's last message when it is the user's: what is new this call."""
    last = request.messages[-1] if request.messages else None
    if last is None or last.role != "user":
        return ""
    return "\n".join(b.text for b in last.content if isinstance(b, TextBlock))


def _rough_tokens(request: ModelRequest) -> int:
    chars = len(request.system)
    for msg in request.messages:
        for b in msg.content:
            if isinstance(b, TextBlock):
                chars += len(b.text)
            elif isinstance(b, ToolResultBlock):
                chars += len(b.content)
            else:
                chars += 80
    return chars // 4


# ----- the two command-line processes --------------------------------------------------------
def _cli(argv: list[str]) -> tuple[int, str]:
    from agent_cli import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue()


def worker_tasks(workdir: str, adds: int, claims: int, seed: int, deadline: float) -> dict:
    """`agent-cli tasks add` with random dependencies; every few adds a claim + complete."""
    rng = random.Random(seed)
    wd = ["-C", workdir]
    added, completed, refused, errors, last_id = [], [], 0, [], 0
    every = max(1, adds // claims) if claims else 0
    for i in range(adds):
        if time.time() > deadline:
            break
        argv = [*wd, "tasks", "add", f"cli task {i}", "--as", "lead"]
        for dep in _deps(rng, last_id):
            argv += ["--blocked-by", str(dep)]
        code, out = _cli(argv)
        if code != 0:
            errors.append(f"tasks add exited {code}")
            continue
        last_id = int(out.strip())
        added.append(last_id)
        if every and i % every == every - 1 and len(completed) < claims:
            code, out = _cli([*wd, "tasks", "claim", "--as", CLI_OWNER, "--json"])
            if code == 4:
                refused += 1
                continue
            if code != 0:
                errors.append(f"tasks claim exited {code}")
                continue
            task = json.loads(out)
            code, _ = _cli([*wd, "tasks", "complete", str(task["id"]), "--as", CLI_OWNER,
                            "--token", task["claim_token"], "--result", "done by the cli"])
            if code != 0:
                errors.append(f"tasks complete #{task['id']} exited {code}")
            completed.append(task["id"])
    return {"added": added, "completed": completed, "refused": refused, "errors": errors}


def worker_send(workdir: str, count: int, seed: int, deadline: float) -> dict:
    """`agent-cli send` of `count` messages to random teammates."""
    rng = random.Random(seed)
    sent, errors = [], []
    names = list(TEAMMATES)
    for i in range(count):
        if time.time() > deadline:
            break
        to = rng.choice(names)
        code, _ = _cli(["-C", workdir, "send", "--from", "outsider", "--to", to,
                        f"soak-msg cli:{i}"])
        if code != 0:
            errors.append(f"send to {to} exited {code}")
        else:
            sent.append(f"cli:{i}")
    return {"sent": sent, "errors": errors}


def _deps(rng: random.Random, below: int) -> list[int]:
    """Up to two random dependencies among the 40 ids just below `below` (all exist)."""
    if below < 1:
        return []
    pool = range(max(1, below - 40), below + 1)
    return sorted(rng.sample(pool, k=min(len(pool), rng.choice((0, 1, 1, 2)))))


def _start_worker(kind: str, payload: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, "--worker", kind, json.dumps(payload)],
                            stdout=subprocess.PIPE, text=True)


# ----- the run -------------------------------------------------------------------------------
def _pick_workdir(cfg: SoakConfig) -> tuple[Path, str, bool]:
    if cfg.workdir is not None:
        cfg.workdir.mkdir(parents=True, exist_ok=True)
        return cfg.workdir, "given workdir", False
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="agent-cli-soak-", dir=base)), (
        "tmpfs (/dev/shm)" if base else "system temp dir"), True


def run_soak(cfg: SoakConfig) -> SoakReport:
    from agent_cli.app import open_runtime
    from agent_cli.runtime import RuntimeConfig

    workdir, storage, cleanup = _pick_workdir(cfg)
    names = list(TEAMMATES[: cfg.teammates])
    models = {n: SoakModel(n, names, cfg.seed * 100 + i) for i, n in enumerate(names)}
    rt = open_runtime(workdir, RuntimeConfig(
        model_factory=lambda agent, spec: models[agent], idle_timeout_s=0,
        check_interval_s=0.05, compact_threshold_tokens=cfg.compact_threshold_tokens))
    report = SoakReport(storage=storage)
    started = time.monotonic()
    produce_until = time.time() + cfg.seconds * 0.8
    try:
        rt.roster.add("outsider", "a shell in another terminal")  # `send --from` must be known
        for name in names:
            rt.team.spawn(name, "soak worker")
        n_cli_add = int(cfg.tasks * cfg.cli_add_share)
        n_cli_claim = int(cfg.tasks * cfg.cli_claim_share)
        n_cli_send = max(0, cfg.messages - (cfg.tasks - n_cli_claim))  # teammates send the rest
        procs = {
            "tasks": _start_worker("tasks", {"workdir": str(workdir), "adds": n_cli_add,
                                             "claims": n_cli_claim, "seed": cfg.seed,
                                             "deadline": produce_until}),
            "send": _start_worker("send", {"workdir": str(workdir), "count": n_cli_send,
                                           "seed": cfg.seed + 1, "deadline": produce_until}),
        }
        lead = _Lead(rt, cfg.tasks - n_cli_add, cfg.seed, produce_until)
        lead.start()
        results = {k: json.loads(p.communicate()[0] or "{}") for k, p in procs.items()}
        lead.join()
        total = lead.created + len(results["tasks"].get("added", []))
        report.finished = lead.drain(total, time.monotonic() + max(
            5.0, cfg.seconds - (time.monotonic() - started)))
        report.elapsed_s = time.monotonic() - started
        busy = rt.close(timeout=10.0)
        lead.read_inbox()  # results that arrived after the drain's last look
        report.violations += [f"{n} did not shut down" for n in busy]
        report.violations += [e for r in results.values() for e in r.get("errors", [])]
        report.violations += lead.errors
        report.violations += check_all(rt, models, results, lead.lead_seen, TOKEN_RE,
                                       CLI_OWNER, report.finished)
        _fill_figures(report, rt, models, lead)
    finally:
        rt.close(timeout=5.0)
        if cleanup:
            shutil.rmtree(workdir, ignore_errors=True)
    return report


class _Lead(threading.Thread):
    """The lead's side: create tasks with random dependencies, read the lead's inbox."""

    def __init__(self, rt, count: int, seed: int, until: float) -> None:
        super().__init__(name="soak-lead", daemon=True)
        self.rt, self.count, self.until = rt, count, until
        self.rng = random.Random(seed + 2)
        self.created = 0
        self.top = 0  # the highest id this thread created: every id up to it exists
        self.errors: list[str] = []
        self.lead_seen: Counter[str] = Counter()

    def run(self) -> None:
        try:
            for i in range(self.count):
                if time.time() > self.until:
                    break
                task = self.rt.board.create(f"lead task {i}",
                                            blocked_by=_deps(self.rng, self.top))
                self.top = task.id
                self.created += 1
                if i % 50 == 0:
                    self.read_inbox()
        except Exception as exc:  # reported, never hidden
            self.errors.append(f"lead failed: {type(exc).__name__}: {exc}")

    def read_inbox(self) -> None:
        block = self.rt.team.lead_inbox_block()
        if block:
            self.lead_seen.update(re.findall(r"task #(\d+) \(", block))

    def drain(self, total: int, deadline: float) -> bool:
        """Wait until every task is completed and the team is quiet; False at the deadline."""
        while time.monotonic() < deadline:
            self.read_inbox()
            snap = self.rt.board.snapshot()
            done = sum(t.status == "completed" for t in snap.tasks)
            if done >= total and len(snap.tasks) >= total and self.rt.team.wait_quiet(0.5):
                self.read_inbox()
                return True
            self.rt.team.wait_quiet(0.2)
        return False


def _fill_figures(report: SoakReport, rt, models: dict, lead: _Lead) -> None:
    snap = rt.board.snapshot()
    report.tasks_created = len(snap.tasks)
    report.tasks_completed = sum(t.status == "completed" for t in snap.tasks)
    teammate_msgs = sum(len(m.sent) for m in models.values())
    report.messages = teammate_msgs + sum(1 for _ in inbox_lines_from(rt, "outsider"))
    report.lead_messages = sum(lead.lead_seen.values())
    report.compactions = sum(m.compactions for m in models.values())
    secs = max(report.elapsed_s, 1e-9)
    report.tasks_per_s = round(report.tasks_completed / secs, 1)
    report.messages_per_s = round((report.messages + report.lead_messages) / secs, 1)
    report.elapsed_s = round(report.elapsed_s, 2)
    report.peak_rss_mb = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    report.peak_rss_children_mb = round(
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--tasks", type=int, default=2000)
    p.add_argument("--messages", type=int, default=5000)
    p.add_argument("--workdir", type=Path)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", action="store_true")
    p.add_argument("--worker", nargs=2, metavar=("KIND", "PAYLOAD"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        kind, payload = args.worker[0], json.loads(args.worker[1])
        fn = worker_tasks if kind == "tasks" else worker_send
        print(json.dumps(fn(**payload)))
        return 0
    report = run_soak(SoakConfig(seconds=args.seconds, tasks=args.tasks,
                                 messages=args.messages, workdir=args.workdir, seed=args.seed))
    if args.json:
        print(json.dumps(asdict(report), indent=2))
    else:
        for key, value in asdict(report).items():
            if key != "violations":
                print(f"{key:22} {value}")
        print(f"{'violations':22} {len(report.violations)}")
        for v in report.violations[:50]:
            print(f"  - {v}")
    return 0 if report.finished and not report.violations else 1


if __name__ == "__main__":
    sys.exit(main())
