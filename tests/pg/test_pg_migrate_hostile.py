"""`board migrate` against planted state: a file whose content PostgreSQL cannot hold (a
NUL, a bad time, a pid past int4, a resent message id) is named and left out instead of
failing the whole copy; rows planted in the database (an inbox named like a path, a message
for someone else, a member that is not one) are named and never become files outside DIR."""

from __future__ import annotations

import json
from pathlib import Path

from support import board_states
from support.board_states import PgTeam, every_state, picture

from agent_cli.pg.board_dump import read_files
from agent_cli.pg.migrate import from_database, into_database, into_files
from agent_cli.pg.stores import open_database
from agent_cli.stores import open_file_stores

pg_team = board_states.pg_team


def _plant_files(src: Path) -> None:
    (src / ".tasks" / "task_7.json").write_text(json.dumps({
        "id": 7, "subject": "nul\u0000here", "created_at": "2026-01-01T00:00:00.000Z",
        "updated_at": "2026-01-01T00:00:00.000Z"}))
    (src / ".tasks" / "task_8.json").write_text(json.dumps({
        "id": 8, "subject": "when?", "created_at": "yesterday", "updated_at": "today"}))
    config = json.loads((src / ".team" / "config.json").read_text())
    config["members"][0]["pid"] = 1 << 40
    (src / ".team" / "config.json").write_text(json.dumps(config))
    first = (src / ".team" / "inbox" / "alice.jsonl").read_text().splitlines()[0]
    resent = json.loads(first)
    resent["to"] = "erin"
    with open(src / ".team" / "inbox" / "erin.jsonl", "a") as f:
        f.write(json.dumps(resent) + "\n")


def test_what_the_database_cannot_hold_is_named_and_the_rest_copied(
        tmp_path: Path, pg_team: PgTeam) -> None:
    every_state(tmp_path)
    _plant_files(tmp_path)
    dump = read_files(tmp_path)
    named = "\n".join(dump.problems)
    assert "task_7.json: holds a NUL character; not copied" in named
    assert "task_8.json: time 'yesterday' is not an ISO 8601 time; not copied" in named
    assert "config.json: member alice: pid 1099511627776 is not a process id" in named
    assert "erin.jsonl: line at byte" in named and "is already copied" in named
    db = open_database(pg_team.url, pg_team.name)
    try:
        into_database(dump, db)
    finally:
        db.close()
    stores = pg_team.stores()
    try:
        assert [t.id for t in stores.board.snapshot().tasks] == [1, 2, 3, 4, 5]
        assert [m.name for m in stores.roster.members()] == ["bob", "erin"]
        assert len(stores.mail.peek("erin")) == 1  # the broadcast, not the resend
    finally:
        stores.close()


def test_rows_planted_in_the_database_never_become_files_outside(
        tmp_path: Path, pg_team: PgTeam) -> None:
    src, dest = tmp_path / "src", tmp_path / "deep" / "dest"
    src.mkdir(), dest.mkdir(parents=True)
    every_state(src)
    before = picture(open_file_stores(src))
    db = open_database(pg_team.url, pg_team.name)
    try:
        into_database(read_files(src), db)
        body = json.dumps({"id": "p1", "type": "message", "from": "lead", "to": "evil",
                           "content": "x", "ts": "t"})
        db.execute("INSERT INTO inbox_message (inbox, seq, id, body) VALUES "
                   "('../../evil', 1, 'p1', %s::jsonb), ('bob', 99, 'p2', %s::jsonb)",
                   (body, body.replace('"p1"', '"p2"')))
        db.execute("INSERT INTO roster_member (name, data) VALUES "
                   "('mallory', '{\"name\": \"Mallory!\"}'::jsonb)")
        dump = from_database(db)
        into_files(dump, dest)
    finally:
        db.close()
    named = "\n".join(dump.problems)
    assert "inbox_message of '../../evil': not an agent name; not copied" in named
    assert "inbox_message of 'bob': addressed to 'evil'" in named
    assert "roster_member row 4:" in named
    assert sorted(p.name for p in tmp_path.rglob("*evil*")) == []
    assert picture(open_file_stores(dest)) == before
