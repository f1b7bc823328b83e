"""`board migrate` through the copy functions: a file board with every kind of state reads
the same on PostgreSQL after `--from` and on files again after `--to`; tokens ever drawn
stay drawn; a non-empty target is refused with nothing written; a corrupt or planted file
is named and left out (a link never followed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import board_states
from support.board_states import PgTeam, every_state, picture

from agent_cli.board.leases import LeaseExpired
from agent_cli.errors import Refused, UserError
from agent_cli.pg.board import PgTaskBoard
from agent_cli.pg.board_dump import read_files
from agent_cli.pg.migrate import from_database, into_database, into_files
from agent_cli.pg.stores import open_database
from agent_cli.stores import open_file_stores

pg_team = board_states.pg_team


def _to_db(src: Path, team: PgTeam) -> list[str]:
    dump = read_files(src)
    db = open_database(team.url, team.name)
    try:
        into_database(dump, db)
    finally:
        db.close()
    return dump.problems


def _to_files(team: PgTeam, dest: Path) -> None:
    db = open_database(team.url, team.name)
    try:
        into_files(from_database(db), dest)
    finally:
        db.close()


def _picture_of_files(workdir: Path) -> dict:
    stores = open_file_stores(workdir)
    return picture(stores)


def _picture_of_db(team: PgTeam) -> dict:
    stores = team.stores()
    try:
        return picture(stores)
    finally:
        stores.close()


def test_there_and_back_reads_the_same(tmp_path: Path, pg_team: PgTeam) -> None:
    src, back = tmp_path / "src", tmp_path / "back"
    src.mkdir(), back.mkdir()
    every_state(src)
    before = _picture_of_files(src)
    assert _to_db(src, pg_team) == []
    on_db = _picture_of_db(pg_team)
    assert on_db == before
    _to_files(pg_team, back)
    assert _picture_of_files(back) == before
    # both directions keep the counts a user would check
    assert len(before["tasks"]) == 5 and len(before["events"]) >= 12
    assert before["inboxes"]["alice"] and before["requests"]


def test_ids_continue_after_the_copied_ones(tmp_path: Path, pg_team: PgTeam) -> None:
    every_state(tmp_path)
    _to_db(tmp_path, pg_team)
    stores = pg_team.stores()
    try:
        assert stores.board.create("After the move").id == 6
    finally:
        stores.close()


def test_tokens_drawn_on_files_are_never_drawn_again(tmp_path: Path, pg_team: PgTeam) -> None:
    built = every_state(tmp_path)
    _to_db(tmp_path, pg_team)
    db = open_database(pg_team.url, pg_team.name)
    try:
        board = PgTaskBoard(db)
        task = board.get(5)  # erin holds it now; carol's token of it ran out on files
        with pytest.raises(LeaseExpired):
            board.complete(5, "carol", built.expired_token)
        fresh = board.create("Needs a token")
        reused = PgTaskBoard(db, token_factory=lambda: built.live_token)
        with pytest.raises(Refused, match="only used claim tokens"):
            reused.claim(fresh.id, "zed")
        assert board.get(fresh.id).status == "pending"
        assert board.get(5) == task
    finally:
        db.close()


def test_tokens_drawn_on_the_database_survive_the_way_back(tmp_path: Path,
                                                            pg_team: PgTeam) -> None:
    from agent_cli.board import TaskBoard

    src, back = tmp_path / "src", tmp_path / "back"
    src.mkdir(), back.mkdir()
    built = every_state(src)
    _to_db(src, pg_team)
    _to_files(pg_team, back)
    board = TaskBoard(back / ".tasks", token_factory=lambda: sorted(built.drawn)[0])
    fresh = board.create("Needs a token")
    with pytest.raises(Refused, match="only used claim tokens"):
        board.claim(fresh.id, "zed")
    with pytest.raises(LeaseExpired):
        TaskBoard(back / ".tasks").complete(5, "carol", built.expired_token)


def test_a_database_with_a_board_is_refused_untouched(tmp_path: Path, pg_team: PgTeam) -> None:
    every_state(tmp_path)
    stores = pg_team.stores()
    try:
        stores.board.create("Already here")
        before = _picture_of_db(pg_team)
        with pytest.raises(UserError, match=r"not empty \(1 tasks, 1 events"):
            _to_db(tmp_path, pg_team)
        assert _picture_of_db(pg_team) == before
    finally:
        stores.close()


def test_a_directory_with_a_board_is_refused_untouched(tmp_path: Path, pg_team: PgTeam) -> None:
    src, dest = tmp_path / "src", tmp_path / "dest"
    src.mkdir(), dest.mkdir()
    every_state(src)
    _to_db(src, pg_team)
    (dest / ".team").mkdir()
    (dest / ".team" / "config.json").write_text("{}")
    with pytest.raises(UserError, match=r"already has a board \(\.team/config\.json\)"):
        _to_files(pg_team, dest)
    assert sorted(p.name for p in dest.rglob("*")) == [".team", "config.json"]


def test_an_unused_board_directory_keeps_its_readme(tmp_path: Path, pg_team: PgTeam) -> None:
    src, dest = tmp_path / "src", tmp_path / "dest"
    src.mkdir(), dest.mkdir()
    every_state(src)
    _to_db(src, pg_team)
    (dest / ".tasks").mkdir()
    (dest / ".tasks" / "README.md").write_text("tracked\n")
    _to_files(pg_team, dest)
    assert (dest / ".tasks" / "README.md").read_text() == "tracked\n"
    assert (dest / ".tasks" / "task_5.json").is_file()
    assert sorted(p.name for p in dest.iterdir()) == [".tasks", ".team"]  # nothing left over


def test_corrupt_and_planted_files_are_named_and_left_out(tmp_path: Path,
                                                          pg_team: PgTeam) -> None:
    src = tmp_path / "src"
    src.mkdir()
    every_state(src)
    secret = tmp_path / "secret.json"
    secret.write_text('{"id": 9, "subject": "from outside", "created_at": "x", '
                      '"updated_at": "x"}')
    os.symlink(secret, src / ".tasks" / "task_9.json")
    (src / ".tasks" / "task_8.json").write_text("{not json")
    with open(src / ".team" / "inbox" / "bob.jsonl", "a") as f:
        f.write('{"id": "x1", "type": "message", "from": "lead", "to": "alice", '
                '"content": "misfiled", "ts": "t"}\n')
    problems = _to_db(src, pg_team)
    named = "\n".join(problems)
    assert "task_9.json" in named and "symbolic link" in named
    assert "task_8.json: not valid JSON" in named
    assert "bob.jsonl: line at byte" in named and "addressed to 'alice'" in named
    stores = pg_team.stores()
    try:
        assert [t.id for t in stores.board.snapshot().tasks] == [1, 2, 3, 4, 5]
        assert "misfiled" not in [m.content for m in stores.mail.peek("bob")]
    finally:
        stores.close()


def test_a_task_depending_on_a_left_out_one_refuses_the_copy(tmp_path: Path,
                                                             pg_team: PgTeam) -> None:
    src = tmp_path / "src"
    src.mkdir()
    every_state(src)
    (src / ".tasks" / "task_3.json").write_text("[]")  # task 4 waits for it
    with pytest.raises(UserError, match="task 4 depends on task 3, which is not copied"):
        _to_db(src, pg_team)
    db = open_database(pg_team.url, pg_team.name)
    try:
        assert db.execute("SELECT count(*) FROM board_task") == [(0,)]
    finally:
        db.close()


def test_a_failed_way_back_leaves_the_directory_as_it_was(tmp_path: Path, pg_team: PgTeam,
                                                          monkeypatch) -> None:
    import agent_cli.pg.migrate as migrate

    src, dest = tmp_path / "src", tmp_path / "dest"
    src.mkdir(), dest.mkdir()
    every_state(src)
    _to_db(src, pg_team)
    (dest / ".tasks").mkdir()
    (dest / ".tasks" / "README.md").write_text("tracked\n")
    real = os.rename
    moved: list[str] = []

    def rename(a, b):  # the second directory cannot be moved in
        moved.append(Path(b).name)
        if Path(b) == dest / ".team":
            raise OSError(28, "No space left on device")
        return real(a, b)

    monkeypatch.setattr(migrate.os, "rename", rename)
    with pytest.raises(UserError, match="cannot move the copy into .*No space left"):
        _to_files(pg_team, dest)
    monkeypatch.setattr(migrate.os, "rename", real)
    assert ".tasks" in moved  # the first one had gone in, and was taken out again
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*")) == [
        ".tasks", ".tasks/README.md"]
    assert (dest / ".tasks" / "README.md").read_text() == "tracked\n"
