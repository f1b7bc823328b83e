"""Attacks on the board URL's password: wherever libpq would read a password from the URL
(user:PW@, ?password=, a percent-encoded keyword, sslpassword), every message names the board
with it masked, including the server's or libpq's own error text that quotes it back."""

from __future__ import annotations

import pytest

from agent_cli.errors import StorageError, UserError
from agent_cli.pg.db import Database
from agent_cli.stores import board_location, mask_url

SECRET = "s3cret"
DEAD = "127.0.0.1:1"  # nothing listens there: the connection fails at once

# libpq reads a password from each of these (psycopg.conninfo.conninfo_to_dict agrees)
URLS = [
    f"postgresql://ann:{SECRET}@{DEAD}/db",
    f"postgresql://ann@{DEAD}/db?password={SECRET}",
    f"postgresql://ann@{DEAD}/db?pass%77ord={SECRET}",
    f"postgresql://ann@{DEAD}/db?PASSWORD={SECRET}",
    f"postgres://ann@{DEAD}/db?sslmode=disable&sslpassword={SECRET}",
    f"postgresql://ann:{SECRET}%zz@{DEAD}/db",  # libpq quotes a bad token back
    f"postgresql://ann:{SECRET}%00@{DEAD}/db",
    f"postgresql://ann@{DEAD}/db?password={SECRET}%zz",
    f"postgresql://ann:{SECRET}@{DEAD},[::1/db",  # libpq quotes the whole URL back
    f"postgresql://ann:p%40{SECRET}@{DEAD}/db",  # percent-encoded in the userinfo
    f"postgresql://ann:{SECRET}?x@{DEAD}/db",  # libpq: '?' and '#' may sit in a password
    f"postgresql://ann:{SECRET}#x@{DEAD}/db",
]


def connect_error(url: str) -> str:
    with pytest.raises(StorageError) as err:
        Database(url, "t_attack", connect_timeout_s=2).conn()
    return str(err.value)


@pytest.mark.parametrize("url", URLS)
def test_a_failed_connection_never_shows_the_password(url: str) -> None:
    pytest.importorskip("psycopg")
    text = connect_error(url)
    assert SECRET not in text, text
    assert "\n" not in text and text.startswith("PostgreSQL board ")


@pytest.mark.parametrize("url", URLS)
def test_the_shown_location_never_carries_the_password(url: str) -> None:
    shown = board_location(url, {}, None).shown
    assert SECRET not in shown and SECRET not in mask_url(url)
    assert "***" in shown


def test_a_password_key_spelled_with_percent_escapes_is_masked() -> None:
    assert mask_url("postgresql://h/db?pass%77ord=x&user=ann") == \
        "postgresql://h/db?pass%77ord=***&user=ann"


def test_a_refused_url_does_not_echo_a_query_password() -> None:
    with pytest.raises(UserError) as err:
        board_location(f"mysql://h/db?pass%77ord={SECRET}", {}, None)
    assert SECRET not in str(err.value)


def test_the_database_refuses_a_bare_secret_without_showing_it() -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(UserError) as err:
        Database(SECRET, "t_attack")
    assert SECRET not in str(err.value)


@pytest.fixture
def default_team(pg_cluster):
    """The schema `--board URL` opens (team "default"), dropped at the end."""
    yield
    import psycopg

    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS agent_cli_default CASCADE")


@pytest.mark.parametrize("argv", [("tasks", "list"), ("team",), ("team", "--json"),
                                  ("tasks", "add", "x")])
def test_the_commands_never_print_the_password(argv, pg_cluster, default_team, workdir,
                                               capsys) -> None:
    """A reachable server (its password in the query: the test server trusts everyone) and
    an unreachable one: whatever a command prints, the password is not in it."""
    from agent_cli.cli import main

    base = pg_cluster.url.rsplit("/", 1)[0]
    for url in (f"{base}/postgres?pass%77ord={SECRET}&application_name=w4",
                f"postgresql://ann:{SECRET}%zz@{DEAD}/db"):
        code = main(["-C", str(workdir), "--board", url, *argv])
        out, err = capsys.readouterr()
        assert SECRET not in out + err, (url, out, err)
        if "127.0.0.1:1" in url:
            assert code != 0 and err.count("\n") == 1


def test_the_session_config_does_not_carry_the_password_into_a_repr() -> None:
    """A traceback, a debugger or a log line printing the session's RuntimeConfig."""
    from agent_cli.runtime import RuntimeConfig

    config = RuntimeConfig(board=f"postgresql://ann:{SECRET}@db.example/team")
    assert SECRET not in repr(config) and SECRET not in str(config)
