"""A teammate process on "another host" (its own directory, AGENT_CLI_HOST=host-b) joins a
lead's team on a database board; the write its rules leave open is asked of the lead's
human through the database, shown with the teammate's host, and the answer decides what
reaches the teammate's disk: allowed, the file is there and the task completed once; denied,
no file and the human's feedback reaches the teammate."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.team import make_runtime
from support.teammate_proc import TeammateProcess

from agent_cli.models.scripted import ScriptedModel
from agent_cli.permissions.broker import ApprovalAnswer

WRITE = 'Write "from host b" to notes.txt.'
WAIT = 120.0  # a process start, its model turn and a database round trip, on a loaded machine


@pytest.fixture
def board_url(pg_cluster) -> Iterator[str]:
    """A database of this test's own on the session's server (dropped at the end)."""
    import psycopg

    name = "rt_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield pg_cluster.url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _lead(tmp_path: Path, url: str, cleanup):
    lead_dir = tmp_path / "host-a"
    lead_dir.mkdir()
    lead = make_runtime(lead_dir, ScriptedModel({}), board=url)
    cleanup(lead)
    lead.broker.attach_ui()  # the lead's terminal: the bridge shows remote questions here
    return lead


def _bob(tmp_path: Path, url: str) -> tuple[TeammateProcess, Path]:
    mate_dir = tmp_path / "host-b"
    mate_dir.mkdir()
    return TeammateProcess(mate_dir, "bob", "--model", "demo", "--board", url,
                           env={"AGENT_CLI_HOST": "host-b"}), mate_dir


def _question(lead, bob: TeammateProcess):
    req = lead.broker.next_request(WAIT)
    assert req is not None, f"no question from the teammate reached the lead: {bob.lines}"
    return req


def test_the_leads_human_allows_a_remote_teammates_write(tmp_path, board_url, cleanup):
    lead = _lead(tmp_path, board_url, cleanup)
    task = lead.board.create("Write notes.txt", WRITE)
    bob, mate_dir = _bob(tmp_path, board_url)
    try:
        req = _question(lead, bob)
        assert (req.agent, req.host) == ("bob", "host-b")
        assert "notes.txt" in req.summary
        assert not (mate_dir / "notes.txt").exists()  # nothing before the answer
        assert lead.broker.answer(req.id, ApprovalAnswer("allow_once"))
        bob.wait_line(f"completed #{task.id}", WAIT)
    finally:
        bob.kill()
    assert (mate_dir / "notes.txt").read_text() == "from host b\n"
    assert not (tmp_path / "host-a" / "notes.txt").exists()
    done = lead.board.get(task.id)
    assert (done.status, done.owner) == ("completed", "bob")
    actions = [e["action"] for e in lead.board.events() if e["task_id"] == task.id]
    assert actions.count("completed") == 1


def test_the_leads_human_denies_and_nothing_is_written(tmp_path, board_url, cleanup):
    lead = _lead(tmp_path, board_url, cleanup)
    task = lead.board.create("Write notes.txt", WRITE)
    bob, mate_dir = _bob(tmp_path, board_url)
    try:
        req = _question(lead, bob)
        assert lead.broker.answer(req.id, ApprovalAnswer("deny", feedback="not on host b"))
        bob.wait_line("not on host b", WAIT)
    finally:
        bob.kill()
    assert not (mate_dir / "notes.txt").exists()
    assert lead.board.get(task.id).status != "completed"
