"""The PostgreSQL board when the server works against it: a claimer's connection killed while
its claim waits (for the task's row, or for the stamp at commit), a statement timeout, a
schema written by a newer agent-cli. Each is one clear line; the claim happened wholly or not
at all, nothing is owned twice, and the board goes on working."""

from __future__ import annotations

import re
import threading
import time

import psycopg
import pytest

from agent_cli.errors import StorageError
from agent_cli.pg.board import PgTaskBoard
from agent_cli.pg.db import Database

WAIT_S = 30.0


class Blocker:
    """A connection of its own holding a row lock the board's next statement must wait for."""

    def __init__(self, url: str, schema: str, lock_sql: str) -> None:
        self.conn = psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}")
        self.conn.execute("BEGIN")
        self.conn.execute(lock_sql)
        self.pid = self.conn.info.backend_pid

    def waiter(self) -> int:
        """The backend pid of the statement waiting behind this lock (polls the server's
        lock table until one waits; fails after WAIT_S)."""
        deadline = time.monotonic() + WAIT_S
        with psycopg.connect(self.conn.info.dsn, autocommit=True) as probe:
            while time.monotonic() < deadline:
                rows = probe.execute("SELECT pid FROM pg_stat_activity "
                                     "WHERE %s = ANY(pg_blocking_pids(pid))", (self.pid,))
                found = rows.fetchall()
                if found:
                    return found[0][0]
                threading.Event().wait(0.01)
        raise AssertionError("no statement ever waited for the lock")

    def release(self) -> None:
        self.conn.execute("ROLLBACK")
        self.conn.close()


def in_thread(fn) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # the test looks at it
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def claim_state(board: PgTaskBoard) -> tuple:
    """What a claim changes: the task's holder, the claim events, the tokens drawn."""
    task = board.get(1)
    claims = [e for e in board.events() if e["action"] == "claimed"]
    [(tokens,)] = board.db.execute("SELECT count(*) FROM board_token")
    return task.status, task.owner, task.claim_token, len(claims), tokens


@pytest.mark.parametrize("held", ["the task's row", "the stamp at commit"])
def test_a_claim_whose_connection_is_killed_happens_wholly_or_not_at_all(pg_cluster, pg_db,
                                                                         held):
    board = PgTaskBoard(pg_db)
    board.create("the job")
    before = claim_state(board)
    lock = ("SELECT id FROM board_task WHERE id = 1 FOR UPDATE" if held == "the task's row"
            else "SELECT seq FROM board_state FOR UPDATE")
    blocker = Blocker(pg_cluster.url, pg_db.schema, lock)
    thread, out = in_thread(lambda: board.claim(1, "alice"))
    victim = blocker.waiter()
    blocker.conn.execute("SELECT pg_terminate_backend(%s)", (victim,))
    thread.join(WAIT_S)
    blocker.release()
    error = out.get("error")
    assert isinstance(error, StorageError), out
    assert re.search("terminat|closed the connection", str(error)), error
    assert "\n" not in str(error)
    assert claim_state(board) == before  # nothing of the claim was kept
    task = board.claim(1, "alice")  # the same board (a new connection) goes on
    assert task.owner == "alice"
    assert claim_state(board)[3:] == (1, 1)


def test_a_statement_timeout_is_one_line_and_changes_nothing(pg_cluster, pg_db):
    board = PgTaskBoard(pg_db)
    board.create("the job")
    impatient = PgTaskBoard(Database(pg_cluster.url, pg_db.schema, statement_timeout_ms=300))
    blocker = Blocker(pg_cluster.url, pg_db.schema,
                      "SELECT id FROM board_task WHERE id = 1 FOR UPDATE")
    try:
        with pytest.raises(StorageError, match="statement timeout") as err:
            impatient.claim(1, "alice")
    finally:
        blocker.release()
    assert "\n" not in str(err.value)
    assert board.get(1).status == "pending"
    assert impatient.claim(1, "alice").owner == "alice"
    impatient.db.close()


def test_a_board_schema_from_a_newer_agent_cli_is_refused_and_left_alone(pg_db):
    board = PgTaskBoard(pg_db)
    board.create("kept")
    pg_db.execute("INSERT INTO schema_version (component, version) VALUES ('board', 99)")
    with pytest.raises(StorageError, match="board schema is version 99, this agent-cli knows "
                                           "up to 1: upgrade agent-cli"):
        PgTaskBoard(pg_db)
    assert [t.subject for t in board.snapshot().tasks] == ["kept"]


def test_a_password_never_reaches_a_board_error(pg_cluster):
    url = pg_cluster.url.replace("postgres@", "postgres:s3cret@", 1)
    db = Database(url.rsplit(":", 1)[0] + ":1/postgres", "t_nowhere", connect_timeout_s=2)
    with pytest.raises(StorageError) as err:
        PgTaskBoard(db)
    assert "s3cret" not in str(err.value) and "\n" not in str(err.value)


def test_claim_next_waits_for_a_row_locked_by_a_change_that_rolls_back(pg_cluster, pg_db):
    """SKIP LOCKED passes over a claimable task whose row another transaction holds; when
    nothing else is claimable, claim_next waits for that row rather than answer "nothing"
    while a task is claimable (the holder here rolls back, as a refused update does)."""
    board = PgTaskBoard(pg_db)
    board.create("the job")
    blocker = Blocker(pg_cluster.url, pg_db.schema,
                      "SELECT id FROM board_task WHERE id = 1 FOR UPDATE")
    thread, out = in_thread(lambda: board.claim_next("alice"))
    blocker.waiter()
    blocker.release()
    thread.join(WAIT_S)
    assert out["value"].task is not None and out["value"].task.owner == "alice", out
