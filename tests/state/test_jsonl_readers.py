"""One JSON-lines reader: read_jsonl skips a torn last line and names bad complete lines, and the
event log, audit log, quarantine and transcript readers agree with it."""

from __future__ import annotations

import json

import pytest

from agent_cli.agent.transcript import read_records
from agent_cli.board.eventlog import read_events
from agent_cli.errors import StorageError
from agent_cli.jsonlines import read_jsonl
from agent_cli.permissions.audit import AuditLog
from agent_cli.team.mailbox import Mailbox

LINES = b'{"kind": "a", "n": 1}\nnot json\n[1, 2]\n\n{"kind": "b", "n": 2}\n{"kind": "c", "n": 3}'


def test_read_jsonl_skips_a_torn_last_line_and_names_bad_complete_lines(workdir):
    path = workdir / "log.jsonl"
    path.write_bytes(LINES)
    records, problems = read_jsonl(path)
    assert [r["n"] for r in records] == [1, 2]
    assert [str(p) for p in problems] == [
        f"{path}:2: not valid JSON",
        f"{path}:3: not a JSON object",
    ]
    _, with_torn = read_jsonl(path, report_torn=True)
    assert str(with_torn[-1]) == f"{path}:6: incomplete last line"
    assert read_jsonl(workdir / "missing.jsonl") == ([], [])
    with pytest.raises(StorageError, match="is a directory"):
        read_jsonl(workdir)


def test_the_four_readers_agree_on_a_torn_last_line(workdir):
    path = workdir / "log.jsonl"
    path.write_bytes(LINES)
    events, event_problems = read_events(path)
    assert [e["n"] for e in events] == [1, 2]
    assert [p.path for p in event_problems] == [f"{path}:2", f"{path}:3"]

    audit = AuditLog(path)
    assert [e["n"] for e in audit.entries()] == [1, 2]

    mail = Mailbox(workdir / ".team")
    mail.quarantine_path("alice").parent.mkdir(parents=True)
    mail.quarantine_path("alice").write_bytes(LINES)
    assert [r["n"] for r in mail.quarantined("alice")] == [1, 2]

    records, problems = read_records(path)
    assert [r["n"] for r in records] == [1, 2]
    assert [p.split(": ")[0] for p in problems] == [f"{path}:2", f"{path}:3", f"{path}:6"]
    assert json.loads(path.read_bytes().split(b"\n")[0])["n"] == 1  # nothing was rewritten
