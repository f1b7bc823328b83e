"""A throwaway PostgreSQL cluster for the tests: started once per test session, stopped and
deleted at the end; each test gets a schema of its own (`pg_db`), dropped after it.

Debian's `postgresql` package provides the server (`.ci/run` installs it when missing).
initdb refuses to run as root, so as root the cluster runs as the `postgres` user in a
directory it owns. Outside CI a machine without PostgreSQL skips these tests with one line
saying how to get it; with CI=true it fails instead.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

HOW = ("no PostgreSQL server binaries (initdb/pg_ctl): `apt-get install postgresql` "
       "(Debian) or set AGENT_CLI_TEST_PG_URL to a server the tests may create schemas on")


@dataclass
class Cluster:
    url: str  # postgresql://postgres@127.0.0.1:PORT/postgres
    stop: object = None
    # pg_ctl restart -m fast (every connection is cut, the server is back when it returns);
    # None for a server the tests did not start (AGENT_CLI_TEST_PG_URL)
    restart: object = None

    def database_url(self, name: str) -> str:
        """The URL of database `name` on this server."""
        base, _, _ = self.url.rpartition("/")
        return f"{base}/{name}"


def _bindir() -> Path | None:
    for cand in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(cand, "initdb").exists():
            return Path(cand)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", "postgres", "--", *argv]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PostgreSQL tests cannot run under CI: {reason}", pytrace=False)
    pytest.skip(reason)


def start_cluster() -> tuple[Cluster, callable]:
    """initdb + pg_ctl start on a free loopback port (fsync off: a throwaway cluster)."""
    bindir = _bindir()
    if bindir is None:
        _unavailable(HOW)
    root = Path(tempfile.mkdtemp(prefix="agent-cli-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sock, "postgres")
    root.chmod(0o755)
    port = _free_port()

    def run(argv: list[str]) -> None:
        proc = subprocess.run(_as_server_user(argv), capture_output=True, text=True,
                              timeout=120)
        if proc.returncode != 0:
            shutil.rmtree(root, ignore_errors=True)
            _unavailable(f"{Path(argv[0]).name} failed: {proc.stderr.strip()[-300:]}")

    run([str(bindir / "initdb"), "-D", str(data), "--no-sync", "-A", "trust", "-U",
         "postgres", "-E", "UTF8"])
    opts = (f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
    run([str(bindir / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(root / "log"),
         "-w", "-t", "60", "start"])

    def stop() -> None:
        subprocess.run(_as_server_user([str(bindir / "pg_ctl"), "-D", str(data), "-m",
                                        "immediate", "-w", "stop"]),
                       capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)

    def restart() -> None:
        # -o and -l again: the new server must not write to (and so hold open) our pipes
        proc = subprocess.run(_as_server_user([str(bindir / "pg_ctl"), "-D", str(data), "-o",
                                               opts, "-l", str(root / "log"), "-m", "fast",
                                               "-w", "-t", "60", "restart"]),
                              capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"pg_ctl restart failed: {proc.stderr.strip()[-300:]}")

    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    return Cluster(url=url, stop=stop, restart=restart), stop


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """The session's PostgreSQL server: AGENT_CLI_TEST_PG_URL, else a throwaway cluster."""
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install '.[test]'")
    given = os.environ.get("AGENT_CLI_TEST_PG_URL")
    if given:
        yield Cluster(url=given)
        return
    cluster, stop = start_cluster()
    try:
        yield cluster
    finally:
        stop()


@pytest.fixture
def pg_schema(pg_cluster: Cluster) -> Iterator[str]:
    """A schema name of this test's own on the session's server, dropped at the end."""
    import psycopg
    from psycopg import sql

    name = "t_" + uuid.uuid4().hex[:20]
    yield name
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute("SET lock_timeout = '20s'")
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


@pytest.fixture
def pg_database(pg_cluster: Cluster) -> Iterator[str]:
    """The URL of a database of this test's own (a team's schema is named after the team,
    so a test running the CLI, whose team is "default", needs a database to itself)."""
    import psycopg
    from psycopg import sql

    name = "d_" + uuid.uuid4().hex[:20]
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield pg_cluster.database_url(name)
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))


@pytest.fixture
def pg_db(pg_cluster: Cluster, pg_schema: str):
    """A Database on this test's own schema (closed at the end)."""
    from agent_cli.pg.db import Database

    db = Database(pg_cluster.url, pg_schema)
    yield db
    db.close()


class NotifyCounter:
    """A notify() callback (a Listener's) that counts its calls; wait_beyond(n) waits for a
    call past n (at most `wait` seconds: a hang guard, not a verdict on speed)."""

    def __init__(self, wait: float = 30.0) -> None:
        self.calls = 0
        self.wait = wait
        self._cond = threading.Condition()

    def __call__(self) -> None:
        with self._cond:
            self.calls += 1
            self._cond.notify_all()

    def wait_beyond(self, count: int) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.calls > count, self.wait)
