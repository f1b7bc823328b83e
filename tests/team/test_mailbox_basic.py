"""The file mailbox: its JSONL lines, torn lines, quarantine, cursor files and paths (the
semantics both backends share are in test_mailbox_contract.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli import cli
from agent_cli.errors import InvalidName, StorageError, UserError
from agent_cli.team.mailbox import Mailbox, parse_line


@pytest.fixture
def mail(workdir: Path) -> Mailbox:
    return Mailbox(workdir / ".team")


def contents(messages) -> list[str]:
    return [m.content for m in messages]


def test_message_line_has_the_documented_fields(mail: Mailbox) -> None:
    sent = mail.send("lead", "alice", "please review #3")
    line = mail.inbox_path("alice").read_text(encoding="utf-8")
    assert line.endswith("\n") and line.count("\n") == 1
    data = json.loads(line)
    assert data == {
        "id": sent.id,
        "type": "message",
        "from": "lead",
        "to": "alice",
        "content": "please review #3",
        "ts": sent.ts,
    }
    assert len(sent.id) == 32 and int(sent.id, 16) >= 0


@pytest.mark.parametrize("cursor", [-1, 10_000, 5, "12", True, 1.5])
def test_bad_ack_is_refused_and_changes_nothing(mail: Mailbox, cursor) -> None:
    mail.send("lead", "alice", "one")
    mail.send("lead", "alice", "two")
    with pytest.raises(UserError):
        mail.ack("alice", cursor)
    assert not mail.cursor_path("alice").exists()
    assert contents(mail.fetch("alice").messages) == ["one", "two"]


def test_incomplete_last_line_waits_until_complete(mail: Mailbox) -> None:
    mail.send("lead", "alice", "whole")
    path = mail.inbox_path("alice")
    line = json.dumps(
        {
            "id": "a" * 32,
            "type": "message",
            "from": "bob",
            "to": "alice",
            "content": "late",
            "ts": "2026-01-01T00:00:00.000Z",
        }
    )
    with open(path, "ab") as fh:  # a writer caught halfway through its line
        fh.write(line[:20].encode())
    first = mail.fetch("alice")
    assert contents(first.messages) == ["whole"]
    assert first.problems == []
    mail.ack("alice", first.cursor)
    with open(path, "ab") as fh:  # ... and finishing it
        fh.write((line[20:] + "\n").encode())
    assert contents(mail.fetch("alice").messages) == ["late"]
    assert mail.quarantined("alice") == []


def test_torn_line_of_a_killed_writer_is_quarantined_and_the_next_send_is_intact(
    mail: Mailbox,
) -> None:
    mail.send("lead", "alice", "before")
    path = mail.inbox_path("alice")
    with open(path, "ab") as fh:  # the writer died here: this fragment never completes
        fh.write(b'{"id":"dead","type":"mess')
    mail.send("lead", "alice", "after")
    got = mail.fetch("alice")
    assert contents(got.messages) == ["before", "after"]
    assert len(got.problems) == 1 and "malformed line" in got.problems[0]
    (record,) = mail.quarantined("alice")
    assert record["line"] == '{"id":"dead","type":"mess'
    assert record["file"] == str(path)
    raw = path.read_bytes()
    assert raw[record["offset"] :].startswith(b'{"id":"dead"')
    assert b'{"id":"dead","type":"mess' in raw  # nothing deleted from the inbox


def test_malformed_lines_are_quarantined_once_and_the_rest_delivers(
    mail: Mailbox, caplog: pytest.LogCaptureFixture
) -> None:
    path = mail.inbox_path("alice")
    mail.send("lead", "alice", "one")
    bad_lines = [
        b"not json at all",
        b'{"id": "x", "type": "telepathy", "from": "lead", "to": "alice", "content": "", '
        b'"ts": "t"}',
        b'{"id": "x", "type": "message", "from": "../etc", "to": "alice", "content": "", '
        b'"ts": "t"}',
        b'{"id": "x", "type": "message", "from": "lead", "to": "bob", "content": "", "ts": "t"}',
        b"\xff\xfe binary",
        b"[1, 2, 3]",
    ]
    with open(path, "ab") as fh:
        for raw in bad_lines:
            fh.write(raw + b"\n")
    mail.send("lead", "alice", "two")
    with caplog.at_level("WARNING"):
        first = mail.fetch("alice")
    assert contents(first.messages) == ["one", "two"]
    assert len(first.problems) == len(bad_lines)
    assert any(str(path) in rec.getMessage() for rec in caplog.records)
    second = mail.fetch("alice")  # not acknowledged yet: same messages, no second copy
    assert contents(second.messages) == ["one", "two"]
    assert second.problems == []
    records = mail.quarantined("alice")
    assert len(records) == len(bad_lines)
    assert records[3]["error"].startswith("addressed to 'bob'")
    assert len(path.read_bytes().splitlines()) == len(bad_lines) + 2


@pytest.mark.parametrize(
    "name", ["../x", "/etc", "", "Alice", "a\x00b", "x" * 40, "a/b", ".", "-x", None, 7]
)
def test_hostile_names_are_refused_before_touching_a_path(mail: Mailbox, name) -> None:
    for call in (
        lambda: mail.send("lead", name, "hi"),
        lambda: mail.send(name, "alice", "hi"),
        lambda: mail.fetch(name),
        lambda: mail.ack(name, 0),
        lambda: mail.peek(name),
        lambda: mail.stamp(name),
        lambda: mail.broadcast("lead", "hi", ["alice", name]),
    ):
        with pytest.raises(InvalidName, match="invalid"):
            call()
    assert not mail.team_dir.exists()  # nothing was created anywhere


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        ({"type": "gossip"}, "unknown message type"),
        ({"type": "shutdown_request"}, "needs a request_id"),
        ({"type": "shutdown_response", "request_id": "r"}, "needs approve"),
        ({"type": "message", "request_id": "r"}, "cannot carry"),
        ({"content": None}, "must be text"),
    ],
)
def test_invalid_messages_are_refused_and_nothing_is_written(
    mail: Mailbox, kwargs: dict, reason: str
) -> None:
    args = {"content": "hi", **kwargs}
    with pytest.raises(UserError, match=reason):
        mail.send("lead", "alice", args.pop("content"), **args)
    assert not mail.inbox_path("alice").exists()


def test_corrupt_cursor_redelivers_and_is_set_aside_on_next_ack(mail: Mailbox) -> None:
    mail.send("lead", "alice", "one")
    mail.ack("alice", mail.fetch("alice").cursor)
    mail.cursor_path("alice").write_text("{garbage", encoding="utf-8")
    got = mail.fetch("alice")
    assert contents(got.messages) == ["one"]  # at-least-once: redeliver, never lose
    assert any("alice.cursor" in p and "corrupt" in p for p in got.problems)
    mail.ack("alice", got.cursor)
    kept = list(mail.inbox_dir.glob("alice.cursor.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_text() == "{garbage"
    assert mail.fetch("alice").messages == []


def test_stamp_changes_on_every_send_and_is_zero_without_an_inbox(mail: Mailbox) -> None:
    assert mail.stamp("alice") == (0, 0)
    mail.send("lead", "alice", "one")
    first = mail.stamp("alice")
    mail.send("lead", "alice", "two")
    assert mail.stamp("alice") != first
    assert mail.stamp("alice")[0] == mail.inbox_path("alice").stat().st_size


def test_parse_line_rejects_a_message_for_another_inbox() -> None:
    raw = json.dumps(
        {"id": "1", "type": "message", "from": "lead", "to": "bob", "content": "", "ts": "t"}
    ).encode()
    assert parse_line(raw, "bob").to == "bob"
    with pytest.raises(ValueError, match="addressed to 'bob'"):
        parse_line(raw, "alice")


def test_an_inbox_that_is_a_directory_is_one_line_naming_it(workdir, capsys):
    (workdir / ".team" / "inbox" / "lead.jsonl").mkdir(parents=True)
    code = cli.main(["-C", str(workdir), "inbox", "lead"])
    err = capsys.readouterr().err
    assert code == StorageError.exit_code
    assert err.count("\n") == 1 and "lead.jsonl" in err and "Traceback" not in err
    delivery = Mailbox(workdir / ".team").fetch("lead")  # a teammate's idle check goes on
    assert delivery.messages == [] and "lead.jsonl is a directory" in delivery.unusable


def test_an_unusable_cursor_is_reported_and_set_aside_not_a_crash(workdir):
    mail = Mailbox(workdir / ".team")
    mail.send("lead", "alice", "hi")
    mail.cursor_path("alice").mkdir()
    delivery = mail.fetch("alice")
    assert [m.content for m in delivery.messages] == ["hi"]
    assert any("alice.cursor is a directory" in p for p in delivery.problems)
    mail.ack("alice", delivery.cursor)
    assert mail.fetch("alice").messages == []
    assert list(mail.inbox_dir.glob("alice.cursor.corrupt-*"))[0].is_dir()  # kept, not deleted
