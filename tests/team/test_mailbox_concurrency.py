"""Mailbox under contention: threads and processes appending, SIGKILLed writers and readers."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from support.race import Race

from agent_cli.team.mailbox import Mailbox, parse_line

SENDER = """
import sys
from pathlib import Path
from agent_cli.team.mailbox import Mailbox
team_dir, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
mail = Mailbox(Path(team_dir))
print("ready", flush=True)
sys.stdin.readline()
for i in range(n):
    mail.send(who, "lead", f"{who}:{i}")
print("done", flush=True)
"""

# Sends forever, fetching and acknowledging every third send; reports each step once done.
SEND_AND_ACK = """
import sys
from pathlib import Path
from agent_cli.team.mailbox import Mailbox
team_dir, tag = sys.argv[1], sys.argv[2]
mail = Mailbox(Path(team_dir))
i = 0
while True:
    msg = mail.send("bob", "alice", f"{tag}:{i}")
    print("sent", msg.id, flush=True)
    if i % 3 == 2:
        got = mail.fetch("alice")
        mail.ack("alice", got.cursor)
        print("acked", got.cursor, *[m.id for m in got.messages], flush=True)
    i += 1
"""


def read_inbox(path: Path) -> list[tuple[int, dict]]:
    """(offset, parsed) for every line; asserts each line is complete JSON."""
    raw = path.read_bytes()
    assert raw == b"" or raw.endswith(b"\n"), "inbox ends with a torn line"
    out, offset = [], 0
    for line in raw.split(b"\n")[:-1]:
        out.append((offset, json.loads(line)))
        parse_line(line, path.stem)  # schema-valid too
        offset += len(line) + 1
    return out


def test_8_threads_and_4_processes_lose_duplicate_and_tear_nothing(workdir: Path) -> None:
    team_dir = workdir / ".team"
    n = 40
    race = Race()
    for i in range(4):
        race.process(f"proc{i}", SENDER, str(team_dir), f"proc{i}", str(n))
    mail = Mailbox(team_dir)

    def sender(who: str) -> None:
        for i in range(n):
            mail.send(who, "lead", f"{who}:{i}")

    for i in range(8):
        race.thread(sender, f"thread{i}")
    race.go()
    outputs = race.finish()  # every process exited 0, no thread raised
    assert [out.strip() for out in outputs.values()] == ["done"] * 4

    lines = read_inbox(mail.inbox_path("lead"))
    assert len(lines) == 12 * n
    assert len({data["id"] for _, data in lines}) == 12 * n
    per_sender: dict[str, list[int]] = defaultdict(list)
    for _, data in lines:
        who, i = data["content"].split(":")
        assert data["from"] == who
        per_sender[who].append(int(i))
    assert set(per_sender) == {f"thread{i}" for i in range(8)} | {f"proc{i}" for i in range(4)}
    for seq in per_sender.values():
        assert seq == list(range(n))  # each sender's messages arrive whole and in order
    got = mail.fetch("lead")
    assert len(got.messages) == 12 * n and got.problems == []


def test_a_message_from_another_process_changes_the_stamp(workdir: Path) -> None:
    mail = Mailbox(workdir / ".team")
    before = mail.stamp("lead")
    subprocess.run(
        [sys.executable, "-c", SENDER, str(mail.team_dir), "carol", "1"],
        input="go\n",
        text=True,
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert mail.stamp("lead") != before
    assert [m.content for m in mail.peek("lead")] == ["carol:0"]


def run_until_killed(team_dir: Path, tag: str, rng: random.Random) -> list[list[str]]:
    """Start SEND_AND_ACK, SIGKILL it after a random number of reports; return the reports."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SEND_AND_ACK, str(team_dir), tag],
        stdout=subprocess.PIPE,
        text=True,
    )
    reports: list[list[str]] = []
    for _ in range(rng.randint(1, 25)):
        line = proc.stdout.readline()
        assert line.endswith("\n"), f"writer died on its own: {line!r}"
        reports.append(line.split())
    os.kill(proc.pid, signal.SIGKILL)  # lands while it is appending, fetching or acking
    rest, _ = proc.communicate(timeout=30)
    reports.extend(line.split() for line in rest.splitlines(keepends=True) if line.endswith("\n"))
    assert proc.returncode == -signal.SIGKILL
    return reports


def test_sigkill_during_sends_and_acks_never_loses_or_redelivers_acked(workdir: Path) -> None:
    team_dir = workdir / ".team"
    mail = Mailbox(team_dir)
    rng = random.Random(20240229)
    confirmed_sent: set[str] = set()
    for round_no in range(30):
        reports = run_until_killed(team_dir, f"r{round_no}", rng)
        confirmed_sent |= {r[1] for r in reports if r[0] == "sent"}
        acked = [r for r in reports if r[0] == "acked"]
        lines = read_inbox(mail.inbox_path("alice"))  # every complete line parses
        on_disk = {data["id"] for _, data in lines}
        assert confirmed_sent <= on_disk  # a send that returned is durable
        cursor = mail.cursor("alice")  # the cursor file always parses
        if acked:
            assert cursor >= int(acked[-1][1])  # an ack that returned is durable
        line_starts = {off for off, _ in lines} | {mail.stamp("alice")[0]}
        assert cursor == 0 or cursor in line_starts  # always on a line boundary
        got = mail.fetch("alice")
        assert got.problems == []
        unacked = {data["id"] for off, data in lines if off >= cursor}
        redelivered = {m.id for m in got.messages}
        assert redelivered == unacked  # everything not acknowledged comes back
        for report in acked:
            assert not redelivered & set(report[2:])  # acknowledged ones never do
        if round_no % 2:  # the parent sometimes takes them in itself
            mail.ack("alice", got.cursor)
    assert mail.quarantined("alice") == []
