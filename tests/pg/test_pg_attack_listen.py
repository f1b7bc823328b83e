"""Attack on the wake-up: the LISTEN connection killed again and again (by anyone who can
call pg_terminate_backend) comes back each time, keeps exactly one LISTEN connection on the
server (none leaked), and a change afterwards still wakes the process."""

from __future__ import annotations

from support.pg import NotifyCounter

from agent_cli.pg.db import Database
from agent_cli.pg.listen import Listener
from agent_cli.pg.mailbox import PgMailbox
from agent_cli.pg.schema import ensure_schema
from agent_cli.pg.team_schema import TEAM

WAIT = 30.0
KILLS = 8


def listeners(db: Database) -> list[int]:
    """The server's backends LISTENing on this team's channel."""
    return [r[0] for r in db.execute(
        "SELECT pid FROM pg_stat_activity WHERE query ILIKE 'LISTEN%%' "
        "AND position(%s in query) > 0 AND pid <> pg_backend_pid()", (db.channel,))]


def test_a_listen_connection_killed_again_and_again_comes_back_once_each_time(
        pg_db: Database) -> None:
    ensure_schema(pg_db, [TEAM])
    counter = NotifyCounter(WAIT)
    listener = Listener(pg_db, counter)
    assert listener.start()
    try:
        for round_ in range(KILLS):
            assert listener.connected.wait(WAIT)
            pid = listener._conn.info.backend_pid
            calls = counter.calls
            assert pg_db.execute("SELECT pg_terminate_backend(%s)", (pid,)) == [(True,)]
            assert counter.wait_beyond(calls), f"no reconnect after kill {round_ + 1}"
        assert listener.reconnects == KILLS
        assert listeners(pg_db) == [listener._conn.info.backend_pid]  # none leaked
        open_conns = [c for c in pg_db._all if not c.closed]
        assert len(open_conns) <= 2  # this thread's and the LISTEN one
        calls = counter.calls
        PgMailbox(pg_db).send("bob", "alice", "still heard")
        assert counter.wait_beyond(calls)
    finally:
        listener.close()
