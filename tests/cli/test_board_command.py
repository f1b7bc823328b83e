"""`agent-cli board init|status|migrate` as a user types them: what each says it did, and
that `tasks list`, `tasks show`, `team` and `inbox` print the same on files and on the
database after a migration, and on files again after the way back. The team is `default`
(what those commands use), so each test gets a database of its own on the session's server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.board_states import every_state

from agent_cli.cli import main

VIEWS = (("tasks", "list"), ("tasks", "show", "2"), ("tasks", "show", "5"), ("team",),
         ("inbox", "alice"), ("inbox", "bob"), ("inbox", "lead"), ("tasks", "doctor"))


@pytest.fixture
def board_url(pg_cluster) -> Iterator[str]:
    """A database of this test's own (dropped at the end), with a password in its URL that
    no output may show (the throwaway cluster trusts any)."""
    import psycopg

    name = "b_" + uuid.uuid4().hex[:16]
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    base = pg_cluster.url.rsplit("/", 1)[0].replace("postgres@", "postgres:hunter2@", 1)
    yield f"{base}/{name}"
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "hunter2" not in out + err
    return code, out, err


def views(capsys, *where: str) -> dict[tuple[str, ...], tuple[int, str]]:
    """What each view prints (and its exit code) at `where` (-C DIR or --board URL)."""
    return {v: run(capsys, *where, *v)[:2] for v in VIEWS}


def test_init_creates_then_finds_the_schema(capsys, board_url: str, workdir: Path) -> None:
    code, out, _ = run(capsys, "-C", str(workdir), "board", "init", "--board", board_url,
                       "--team", "blue")
    assert code == 0
    assert out.startswith("team blue: schema agent_cli_blue at postgresql://postgres:***@")
    assert out.rstrip().endswith("created (versions: approvals 1, board 1, identity 1, team 1)")
    code, out, _ = run(capsys, "-C", str(workdir), "board", "init", "--board", board_url,
                       "--team", "blue")
    assert out.rstrip().endswith(
        "already up to date (versions: approvals 1, board 1, identity 1, team 1)")
    code, out, _ = run(capsys, "-C", str(workdir), "board", "status", "--board", board_url,
                       "--team", "blue")
    assert code == 0
    assert out.splitlines()[1:] == [
        "versions: approvals 1, board 1, identity 1, team 1 "
        "(this agent-cli: approvals 1, board 1, identity 1, team 1)",
        "0 tasks, 0 events, 0 messages, 0 members, 0 protocol requests"]


def test_status_of_a_team_never_created(capsys, board_url: str, workdir: Path) -> None:
    code, out, _ = run(capsys, "-C", str(workdir), "board", "status", "--board", board_url)
    assert code == 1
    assert "schema agent_cli_default" in out and "not created (run `agent-cli board init`)" in out


def test_there_and_back_every_view_prints_the_same(capsys, board_url: str,
                                                   tmp_path: Path) -> None:
    src, back, elsewhere = tmp_path / "src", tmp_path / "back", tmp_path / "elsewhere"
    for d in (src, back, elsewhere):
        d.mkdir()
    every_state(src)
    on_files = views(capsys, "-C", str(src))
    assert on_files[("tasks", "list")][0] == 0 and "Profile it" in on_files[("tasks", "list")][1]

    code, out, err = run(capsys, "board", "migrate", "--from", str(src), "--board", board_url)
    assert (code, err) == (0, "")
    assert "5 tasks, 14 events, 5 claim tokens, 3 members, 7 messages in 4 inboxes, " \
           "2 protocol requests" in out
    assert views(capsys, "-C", str(elsewhere), "--board", board_url) == on_files

    code, out, err = run(capsys, "board", "migrate", "--to", str(back), "--board", board_url)
    assert (code, err) == (0, "")
    assert views(capsys, "-C", str(back)) == on_files


def test_a_second_migration_is_refused_in_one_line(capsys, board_url: str,
                                                   tmp_path: Path) -> None:
    every_state(tmp_path)
    assert run(capsys, "board", "migrate", "--from", str(tmp_path), "--board", board_url)[0] == 0
    before = views(capsys, "-C", str(tmp_path), "--board", board_url)
    code, out, err = run(capsys, "board", "migrate", "--from", str(tmp_path),
                         "--board", board_url)
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and "is not empty (5 tasks, 14 events" in err
    assert views(capsys, "-C", str(tmp_path), "--board", board_url) == before


def test_the_way_back_refuses_a_directory_with_a_board(capsys, board_url: str,
                                                       tmp_path: Path) -> None:
    every_state(tmp_path)
    assert run(capsys, "board", "migrate", "--from", str(tmp_path), "--board", board_url)[0] == 0
    listing = sorted(str(p) for p in tmp_path.rglob("*"))
    code, out, err = run(capsys, "board", "migrate", "--to", str(tmp_path), "--board", board_url)
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and "already has a board (.tasks/" in err
    assert sorted(str(p) for p in tmp_path.rglob("*")) == listing


def test_without_a_database_board_says_how(capsys, workdir: Path) -> None:
    code, out, err = run(capsys, "-C", str(workdir), "board", "init")
    assert code != 0 and out == ""
    assert err == ("agent-cli: board init needs a PostgreSQL database: give --board "
                   "postgresql://user@host/db (or set $AGENT_CLI_BOARD)\n")
    assert list(workdir.iterdir()) == []


@pytest.fixture
def own_role(pg_cluster, board_url: str) -> Iterator[str]:
    """A login role with no privilege on this test's database but CONNECT (PUBLIC's); its
    URL. Dropped at the end."""
    import psycopg

    role = "r_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
    yield board_url.replace("postgres:hunter2@", f"{role}@", 1)
    admin = board_url.replace("postgres:hunter2@", "postgres@", 1)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP OWNED BY {role}")
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(f"DROP ROLE {role}")


def test_a_role_owning_only_its_schema_can_init_and_work(capsys, board_url: str,
                                                         own_role: str, workdir: Path) -> None:
    import psycopg

    code, out, err = run(capsys, "-C", str(workdir), "board", "init", "--board", own_role)
    assert code != 0 and out == ""
    assert "permission denied for database" in err and "a schema agent_cli_default it owns" \
        in err and err.count("\n") == 1
    role = own_role.split("://", 1)[1].split("@", 1)[0]
    admin = board_url.replace("postgres:hunter2@", "postgres@", 1)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA agent_cli_default AUTHORIZATION {role}")
    code, out, _ = run(capsys, "-C", str(workdir), "board", "init", "--board", own_role)
    assert code == 0 and "created (versions: approvals 1, board 1, identity 1, team 1)" in out
    assert run(capsys, "-C", str(workdir), "--board", own_role, "tasks", "add", "hello")[0] == 0
    code, out, _ = run(capsys, "-C", str(workdir), "--board", own_role, "tasks", "list")
    assert "#1  hello" in out


def test_a_directory_without_a_board_is_not_copied(capsys, board_url: str,
                                                   workdir: Path) -> None:
    code, out, err = run(capsys, "board", "migrate", "--from", str(workdir),
                         "--board", board_url)
    assert code != 0 and out == ""
    assert err == f"agent-cli: board migrate: {workdir} has no board (no .tasks/ or .team/): " \
                  "nothing to copy\n"
    code, out, _ = run(capsys, "board", "status", "--board", board_url)
    assert code == 1 and "not created" in out
