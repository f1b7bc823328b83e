"""Where the team's board lives: --board > $AGENT_CLI_BOARD > the user's own settings >
files; only PostgreSQL URLs are accepted; a password is never shown; a repository's settings
cannot point the user's team at a database (the file is named, its "board" not used)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent_cli.errors import UserError
from agent_cli.stores import BoardLocation, board_location, configured_location, mask_url

URL = "postgresql://ann:s3cret@db.example/team"


def put(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


@pytest.fixture
def user(tmp_path: Path) -> Path:
    d = tmp_path / "user-home"
    d.mkdir()
    return d


def test_flag_beats_variable_beats_settings_beats_files() -> None:
    env = {"AGENT_CLI_BOARD": "postgres://env@h/db"}
    assert board_location("postgresql://flag@h/db", env, URL).url == "postgresql://flag@h/db"
    assert board_location(None, env, URL).url == "postgres://env@h/db"
    assert board_location(None, {}, URL) == BoardLocation("postgresql", URL, "default")
    assert board_location(None, {"AGENT_CLI_BOARD": "  "}, None, "red") == \
        BoardLocation("files", None, "red")


@pytest.mark.parametrize("bad", ["mysql://ann:s3cret@h/db", "s3cret", "file:///tmp/x",
                                 "postgresql://ann:s3cret@h/db\nrm", "postgresql:/ann:s3cret@h"])
def test_anything_but_a_postgresql_url_is_one_line_without_the_password(bad: str) -> None:
    for where in ("flag", "env", "settings"):
        with pytest.raises(UserError) as err:
            if where == "flag":
                board_location(bad, {}, None)
            elif where == "env":
                board_location(None, {"AGENT_CLI_BOARD": bad}, None)
            else:
                board_location(None, {}, bad)
        text = str(err.value)
        assert "s3cret" not in text and "\n" not in text and err.value.exit_code == 2


def test_a_settings_value_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(UserError, match='settings "board" must be'):
        board_location(None, {}, {"url": URL})


@pytest.mark.parametrize(("url", "shown"), [
    (URL, "postgresql://ann:***@db.example/team"),
    ("postgres://ann:p@ss:w@h:5432/db", "postgres://ann:***@h:5432/db"),
    ("postgresql://h/db?user=ann&password=s3cret&sslmode=require",
     "postgresql://h/db?user=ann&password=***&sslmode=require"),
    ("postgresql://ann@h/db", "postgresql://ann@h/db"),
    ("postgresql://ann:s3cret@[::1/db", "postgresql://ann:***@[::1/db"),  # not even parsable
])
def test_the_password_is_masked_wherever_it_sits(url: str, shown: str) -> None:
    assert mask_url(url) == shown
    loc = BoardLocation("postgresql", url)  # a traceback or log line shows its repr
    assert loc.shown == shown and shown in repr(loc) and str(loc) == repr(loc)
    assert "s3cret" not in repr(loc) and "p@ss" not in repr(loc)


def test_the_users_own_settings_choose_the_board(workdir: Path, user: Path) -> None:
    put(user / "settings.json", {"board": URL})
    loc, notes = configured_location(workdir, None, {}, user_dir=user)
    assert (loc.kind, loc.url, notes) == ("postgresql", URL, [])
    own_local = "postgresql://ann@local/db"
    put(workdir / ".agent-cli" / "settings.local.json", {"board": own_local})
    assert configured_location(workdir, None, {}, user_dir=user)[0].url == own_local


def test_a_repositorys_board_setting_is_named_never_used(workdir: Path, user: Path) -> None:
    put(workdir / ".agent-cli" / "settings.json", {"board": URL})
    loc, notes = configured_location(workdir, None, {}, user_dir=user)
    assert loc.kind == "files"
    assert len(notes) == 1 and ".agent-cli/settings.json" in notes[0]
    assert "not used" in notes[0] and "s3cret" not in notes[0]


def test_a_settings_local_file_git_tracks_is_the_repositorys(workdir: Path, user: Path) -> None:
    local = workdir / ".agent-cli" / "settings.local.json"
    put(local, {"board": URL})
    subprocess.run(["git", "init", "-q", str(workdir)], check=True)
    subprocess.run(["git", "-C", str(workdir), "add", "-f", str(local)], check=True)
    loc, notes = configured_location(workdir, None, {}, user_dir=user)
    assert loc.kind == "files" and "settings.local.json" in notes[0]


def test_flag_and_variable_do_not_read_settings_at_all(workdir: Path, user: Path) -> None:
    (user / "settings.json").write_text("{broken")  # never opened when the flag decides
    assert configured_location(workdir, URL, {}, user_dir=user)[0].url == URL
    env = {"AGENT_CLI_BOARD": URL}
    assert configured_location(workdir, None, env, user_dir=user)[0].url == URL
    with pytest.raises(UserError, match="not valid JSON"):  # else: never a silent guess
        configured_location(workdir, None, {}, user_dir=user)


def test_claude_settings_never_choose_the_board(workdir: Path, user: Path) -> None:
    """W4 attack: `.claude/settings*.json` of a cloned repository (or one of its own) is not
    an agent-cli board setting: neither is read for "board"."""
    for name in ("settings.json", "settings.local.json"):
        put(workdir / ".claude" / name, {"board": URL})
    loc, notes = configured_location(workdir, None, {}, user_dir=user)
    assert loc.kind == "files" and all("s3cret" not in n for n in notes)
