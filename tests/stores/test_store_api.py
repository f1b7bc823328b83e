"""The file stores offer exactly the interfaces of agent_cli/store_api.py (what a PostgreSQL
backend implements too), so a method the rest of agent-cli calls cannot be added to one
backend only without this failing."""

from __future__ import annotations

import pytest
from support.store_api import mismatches

from agent_cli.board.store import TaskBoard
from agent_cli.store_api import BoardStore, MailStore, ProtocolStoreApi, RosterStore
from agent_cli.team.mailbox import Mailbox
from agent_cli.team.protocol import ProtocolStore
from agent_cli.team.roster import Roster


@pytest.mark.parametrize(("cls", "proto"), [(TaskBoard, BoardStore), (Mailbox, MailStore),
                                            (Roster, RosterStore),
                                            (ProtocolStore, ProtocolStoreApi)])
def test_the_file_stores_implement_the_interfaces(cls: type, proto: type) -> None:
    assert mismatches(cls, proto) == []


def test_a_missing_or_different_method_is_reported() -> None:
    class Partial:
        team_name = "x"

        def stamp(self) -> int:
            return 0

        def get(self, who: str) -> None:  # another parameter name
            return None

    found = mismatches(Partial, RosterStore)
    assert "Partial.snapshot: missing" in found
    assert any(line.startswith("Partial.get(") for line in found)
    assert not any(line.startswith("Partial.stamp") for line in found)
