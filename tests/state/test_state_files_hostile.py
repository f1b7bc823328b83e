"""Hostile files planted at every state path, as a cloned repository could carry them:
symlinks and hard links to a secret outside the workdir, FIFOs, a link to /dev/zero,
directories, JSON nested 200,000 deep, files over their size cap; and symlinks in place of
the state directories themselves. Every command-line verb and a headless run go over them.

What a user would notice is what is checked: the secret outside is unchanged byte for byte,
nothing outside was created, the secret's text appears in no file of the workdir and in no
output (never read, never copied, never written through); no run hangs (each scenario runs
in a subprocess with a timeout) and no run prints a traceback; a planted file is never
deleted (it is still there, or set aside next to it under a new name).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SECRET = b"TOP-SECRET-7f3a: never read, never written\n"
NESTED = b"[" * 200_000 + b"]" * 200_000
BIG = 100 << 20  # a sparse 100 MB file: over every cap, costs no disk

# state file -> how a good one looks (planted kinds replace it)
FILES = [
    ".tasks/task_2.json", ".tasks/.stamp", ".tasks/events.jsonl", ".tasks/.next_id",
    ".tasks/.lock", ".team/config.json", ".team/requests.json", ".team/protocol.log.jsonl",
    ".team/audit.jsonl", ".team/.config.lock", ".team/inbox/alice.jsonl",
    ".team/inbox/lead.jsonl", ".team/inbox/alice.cursor", ".team/inbox/alice.quarantine.jsonl",
    ".team/inbox/alice.lock", ".team/transcripts/lead.jsonl", ".team/lead_usage.json",
    ".agent-cli/settings.json",
    ".agent-cli/history",
]
DIRS = [".team/inbox", ".team/transcripts", ".team", ".tasks", ".agent-cli"]
JSONISH = [f for f in FILES if not f.endswith(".lock")]

SCRIPT = {"lead": [
    {"text": "Looking.", "tool_calls": [
        {"name": "list_tasks", "input": {}},
        {"name": "read_file", "input": {"path": "notes.txt"}},
        {"name": "grep", "input": {"pattern": "SECRET", "path": "."}},
        {"name": "glob", "input": {"pattern": "**/*"}},
        {"name": "write_file", "input": {"path": "out.txt", "content": "x"}},
        {"name": "send_message", "input": {"to": "alice", "content": "hello"}},
        {"name": "create_task", "input": {"subject": "from the model"}},
    ]},
    {"text": "Done looking."},
]}

DRIVER = r"""
import contextlib, io, json, sys, traceback
from agent_cli import cli
wd, script = sys.argv[1], sys.argv[2]
VERBS = [
    ["tasks", "list"], ["tasks", "show", "1"], ["tasks", "show", "2"], ["tasks", "add", "new"],
    ["tasks", "claim", "1", "--as", "bob"], ["tasks", "complete", "1", "--as", "bob"],
    ["tasks", "claim", "--as", "carol"], ["tasks", "release", "3", "--as", "carol"],
    ["tasks", "doctor"], ["team"], ["team", "--json"], ["inbox", "alice"], ["inbox", "lead"],
    ["send", "--from", "lead", "--to", "alice", "hi"], ["inbox", "alice"],
    ["--model", "script:" + script, "-p", "look around"],
]
results = []
for argv in VERBS:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = cli.main(["-C", wd, *argv])
        except SystemExit as exc:
            code = exc.code
        except BaseException:
            traceback.print_exc()
            code = "crash"
    results.append({"argv": argv, "code": code, "out": out.getvalue()})
print(json.dumps(results))
"""


def good_state(wd: Path) -> None:
    """A board with two tasks, a team with alice, an inbox, an audit line, settings."""
    from agent_cli.board.store import TaskBoard
    from agent_cli.permissions.audit import AuditLog
    from agent_cli.team.mailbox import Mailbox
    from agent_cli.team.protocol import ProtocolStore
    from agent_cli.team.roster import Roster

    board = TaskBoard(wd / ".tasks")
    board.create("good")
    board.create("second")
    board.create("third")
    Roster(wd / ".team").add("alice", "coder")
    mail = Mailbox(wd / ".team")
    mail.send("lead", "alice", "first")
    mail.ack("alice", mail.fetch("alice").cursor)
    mail.send("alice", "lead", "report")
    ProtocolStore(wd / ".team").create("shutdown", "lead", "alice")
    AuditLog(wd / ".team" / "audit.jsonl").record(agent="lead", tool="x", decision="allow")
    (wd / ".agent-cli").mkdir()
    (wd / ".agent-cli" / "settings.json").write_text('{"permissions": {"allow": []}}')
    (wd / ".agent-cli" / "history").write_text("\n# t\n+hello\n")
    (wd / "notes.txt").write_text("plain notes\n")


def remove(path: Path) -> None:
    if path.is_symlink() or path.is_file() or path.is_fifo():
        path.unlink()
    elif path.is_dir():
        import shutil

        shutil.rmtree(path)


def plant(path: Path, kind: str, outside: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    remove(path)
    if kind == "symlink":
        path.symlink_to(outside / "secret.txt")
    elif kind == "dir-symlink":
        path.symlink_to(outside / "d", target_is_directory=True)
    elif kind == "hardlink":
        os.link(outside / "secret.txt", path)  # another name of the secret: as bad as a link
    elif kind == "devzero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
        (path / "inner").write_text("x")
    elif kind == "nested":
        path.write_bytes(NESTED + b"\n")
    elif kind == "oversize":
        with open(path, "wb") as fh:
            fh.truncate(BIG)
    else:
        raise AssertionError(kind)


def snapshot(root: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for p in sorted(root.rglob("*")):
        key = str(p.relative_to(root))
        out[key] = p.read_bytes() if p.is_file() else "dir"
    return out


@pytest.fixture
def scene(tmp_path):
    wd, outside = tmp_path / "work", tmp_path / "outside"
    wd.mkdir()
    (outside / "d").mkdir(parents=True)
    (outside / "secret.txt").write_bytes(SECRET)
    (outside / "d" / "keep.txt").write_bytes(SECRET)
    good_state(wd)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    return wd, outside, script


def run_all_verbs(wd: Path, script: Path) -> list[dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "AGENT_CLI_M"))}
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(wd), str(script)],
                          capture_output=True, text=True, timeout=120, env=env, cwd=wd.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check(wd: Path, outside: Path, before: dict, results: list[dict]) -> None:
    for r in results:
        assert r["code"] != "crash" and "Traceback" not in r["out"], (r["argv"], r["out"])
        assert isinstance(r["code"], int) and 0 <= r["code"] <= 5, (r["argv"], r["out"][-500:])
        assert "TOP-SECRET" not in r["out"], r["argv"]
    assert snapshot(outside) == before, "something outside the workdir changed"
    secret = outside / "secret.txt"
    for p in wd.rglob("*"):
        if p.is_symlink() or p.is_fifo() or not p.is_file() or os.path.samefile(p, secret):
            continue  # (a planted hard link is the secret itself, not a copy of it)
        if p.stat().st_size < (32 << 20):
            assert SECRET not in p.read_bytes(), f"the secret was copied into {p}"


def planted_kept(path: Path) -> bool:
    """The planted entry is still there, or was set aside next to it (never deleted)."""
    aside = list(path.parent.glob(path.name + ".unusable-*")) + \
        list(path.parent.glob(path.name + ".corrupt-*"))
    return os.path.lexists(path) or bool(aside)


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "fifo", "devzero", "directory"])
def test_every_state_file_planted_at_once_with_every_verb(scene, kind):
    wd, outside, script = scene
    for rel in FILES:
        plant(wd / rel, kind, outside)
    if kind == "fifo":
        plant(wd / "notes.txt", "fifo", outside)  # read_file of a FIFO must not block
    before = snapshot(outside)
    results = run_all_verbs(wd, script)
    check(wd, outside, before, results)
    for rel in FILES:
        assert planted_kept(wd / rel), rel
    doctor = next(r for r in results if r["argv"] == ["tasks", "doctor"])
    assert "task_2.json" in doctor["out"]  # reported by name


@pytest.mark.parametrize("kind", ["nested", "oversize"])
def test_nested_and_oversized_state_files_are_named_and_never_crash(scene, kind):
    wd, outside, script = scene
    for rel in JSONISH:
        plant(wd / rel, kind, outside)
    before = snapshot(outside)
    results = run_all_verbs(wd, script)
    check(wd, outside, before, results)
    by = {" ".join(r["argv"]): r for r in results}
    assert "task_2.json" in by["tasks doctor"]["out"]
    assert "config.json" in by["team"]["out"] or "settings.json" in by["team"]["out"]


@pytest.mark.parametrize("rel", DIRS)
def test_a_state_directory_that_is_a_symlink_out_is_never_followed(scene, rel):
    wd, outside, script = scene
    plant(wd / rel, "dir-symlink", outside)
    before = snapshot(outside)
    results = run_all_verbs(wd, script)
    check(wd, outside, before, results)
    assert (wd / rel).is_symlink()  # still there: reported, not removed
    named = [r for r in results if rel.split("/")[-1] in r["out"]]
    assert named, f"no verb named {rel}"


def test_the_other_tasks_still_work_next_to_a_directory_named_task_2(scene):
    wd, outside, script = scene
    plant(wd / ".tasks" / "task_2.json", "directory", outside)
    plant(wd / ".tasks" / "task_4.json", "nested", outside)
    results = run_all_verbs(wd, script)
    by = {" ".join(r["argv"]): r for r in results}
    doctor = by["tasks doctor"]["out"]
    assert "task_2.json" in doctor and "task_4.json" in doctor
    assert by["tasks claim 1 --as bob"]["code"] == 0
    assert by["tasks complete 1 --as bob"]["code"] == 0
    assert by["tasks show 1"]["code"] == 0 and "good" in by["tasks show 1"]["out"]
    assert (wd / ".tasks" / "task_2.json" / "inner").read_text() == "x"  # untouched
