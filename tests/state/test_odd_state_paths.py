"""Every state path, one table: a symlink, FIFO or device planted there is reported by name
-- `tasks add` warns about what it met on the board (and where it was set aside), `tasks
doctor` lists it and exits 1 -- and is never followed: the file outside is unchanged."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agent_cli.cli import main

BOARD_PATHS = [".tasks/.next_id", ".tasks/.stamp", ".tasks/.lock", ".tasks/events.jsonl",
               ".tasks/task_2.json"]
OTHER_PATHS = [".team/config.json", ".team/requests.json", ".team/protocol.log.jsonl",
               ".team/audit.jsonl", ".team/lead_usage.json", ".team/inbox/alice.jsonl",
               ".team/inbox/alice.cursor", ".team/inbox/lead.jsonl",
               ".team/transcripts/lead.jsonl", ".agent-cli/settings.json",
               ".agent-cli/settings.local.json", ".agent-cli/history"]
SECRET = b"outside: never read, never written\n"


def can_mknod() -> bool:
    return os.geteuid() == 0


def plant(path: Path, kind: str, outside: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "symlink":
        path.symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(path)
    else:  # a character device like /dev/null
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))


def run(capsys: pytest.CaptureFixture[str], workdir: Path, *argv: str) -> tuple[int, str]:
    code = main(["-C", str(workdir), *argv])
    got = capsys.readouterr()
    return code, got.out + got.err


@pytest.fixture
def board(workdir: Path, capsys) -> Path:
    """Two tasks, a teammate, a message each way, settings and history."""
    from agent_cli.team.roster import Roster

    Roster(workdir / ".team").add("alice", "coder")
    for argv in (["tasks", "add", "one"], ["tasks", "add", "two"],
                 ["send", "--from", "lead", "--to", "alice", "hi"],
                 ["send", "--from", "alice", "--to", "lead", "hello"]):
        assert run(capsys, workdir, *argv)[0] == 0, argv
    for rel in OTHER_PATHS:
        path = workdir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text("{}\n")
    return workdir


KINDS = ["symlink", "fifo", pytest.param("device", marks=pytest.mark.skipif(
    not can_mknod(), reason="mknod needs root"))]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rel", BOARD_PATHS + OTHER_PATHS)
def test_a_planted_entry_at_any_state_path_is_named(board: Path, tmp_path: Path, capsys,
                                                    rel: str, kind: str) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(SECRET)
    plant(board / rel, kind, outside)

    code, added = run(capsys, board, "tasks", "add", "three")
    assert code == 0, added
    code, doctor = run(capsys, board, "tasks", "doctor")
    if rel in BOARD_PATHS[:-1]:  # the add set it aside, and said so; doctor still lists it
        assert f"warning: {rel} was a" in added and f"set aside as {rel}.unusable-" in added
        assert f"note: {rel}.unusable-" in doctor, doctor
    else:  # never touched by the add: a problem doctor names
        assert code == 1 and Path(rel).name in doctor, doctor
        assert "board OK" not in doctor
    assert outside.read_bytes() == SECRET
    assert os.path.lexists(board / rel) or list((board / rel).parent.glob(
        Path(rel).name + ".unusable-*")), "a planted entry was deleted"
