"""The file protocol store: requests.json on disk, its log file, a corrupt file failing
closed (the semantics both backends share are in test_protocol_contract.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.team_backends import Clock

from agent_cli.errors import CorruptFile, Refused
from agent_cli.team.protocol import ProtocolStore, kind_of


@pytest.fixture
def store(workdir: Path, clock: Clock) -> ProtocolStore:
    return ProtocolStore(workdir / ".team", clock=clock)



def test_create_writes_requests_json_with_a_five_minute_window(store: ProtocolStore) -> None:
    req = store.create("shutdown", "lead", "alice", "please stop")
    on_disk = json.loads(store.path.read_text())
    assert on_disk["version"] == 1
    (entry,) = on_disk["requests"]
    assert entry["id"] == req.id and len(req.id) == 32
    assert (entry["kind"], entry["sender"], entry["target"]) == ("shutdown", "lead", "alice")
    assert entry["status"] == "pending" and entry["resolution"] is None
    assert entry["created_at"] == "2026-03-01T12:00:00.000Z"
    assert entry["expires_at"] == "2026-03-01T12:05:00.000Z"
    assert store.get(req.id) == req
    assert store.pending(kind="shutdown", target="alice") == [req]


def test_corrupt_requests_file_fails_closed_then_is_set_aside(store: ProtocolStore) -> None:
    store.team_dir.mkdir(parents=True)
    store.path.write_text("{oops")
    with pytest.raises(CorruptFile, match="requests.json"):
        store.latest_plan("alice")  # a plan gate must not open on unreadable state
    with pytest.raises(Refused, match="requests.json"):
        store.resolve("a" * 32, "shutdown", "alice", "lead", True)
    assert store.path.read_text() == "{oops"
    req = store.create("shutdown", "lead", "alice")
    (kept,) = store.team_dir.glob("requests.json.corrupt-*")
    assert kept.read_text() == "{oops"
    assert [r.id for r in store.load()] == [req.id]


def test_kind_of_maps_message_types() -> None:
    assert kind_of("shutdown_response") == "shutdown"
    assert kind_of("plan_approval_request") == "plan_approval"
    assert kind_of("message") is None




