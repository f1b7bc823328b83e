"""A file board holding every kind of team state, built through the real file stores, and
`picture(stores)`: what `tasks list/show`, `team` and `inbox` would show, on either backend.

`every_state(workdir)` leaves: a completed task with a result and a verify, a held task with
a live lease, one claimed by claim_next after another owner's lease ran out (that owner's
token ended as `x`), a released one, routed ones (assignee, role, require_plan), dependency
chains, read and unread messages (a protocol one too), roster members, and a pending and a
resolved protocol request.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass
class Built:
    """What a test needs to know about the board it got."""

    expired_token: str  # carol's token: her lease ran out (the ledger says `x`)
    live_token: str  # bob's token on task 2, still valid
    drawn: set[str]  # every token the board handed out


def every_state(workdir: Path) -> Built:
    """Fill `workdir`'s .tasks/ and .team/ (see the module docstring)."""
    from agent_cli.board import TaskBoard
    from agent_cli.team.mailbox import Mailbox
    from agent_cli.team.protocol import ProtocolStore
    from agent_cli.team.roster import Roster

    now = [time.time()]
    board = TaskBoard(workdir / ".tasks", clock=lambda: now[0], lease_s=3600)
    t1 = board.create("Write the parser", "tokens, then a tree",
                      verify={"command": "python -m pytest -q", "set_by": "cli"})
    t2 = board.create("Test the parser", blocked_by=[t1.id], assignee="bob")
    t3 = board.create("Document it", role="writer", require_plan=True)
    t4 = board.create("Release", "tag and push", blocked_by=[t2.id, t3.id], actor="alice")
    t5 = board.create("Profile it")
    board.update(t4.id, role="maintainer")
    alice = board.claim(t1.id, "alice")
    board.complete(t1.id, "alice", alice.claim_token or "", "parser done: 3 files")
    bob = board.claim(t2.id, "bob")
    carol = board.claim(t5.id, "carol", lease_s=1)
    dave = board.claim(t3.id, "dave", role="writer")
    board.release(t3.id, "dave", "stopped by the lead")
    now[0] += 5  # carol's lease runs out; erin's claim_next takes her task back first
    erin = board.claim_next("erin", detail="auto-claimed")
    assert erin.task is not None and erin.task.id == t5.id

    team_dir = workdir / ".team"
    roster = Roster(team_dir, team_name="default")
    roster.add("alice", "coder", model="claude-test")
    roster.add("bob", "tester", require_plan=True)
    roster.update("bob", status="working", current_task=t2.id, idle_reason="")
    roster.add("erin", "profiler")
    roster.update("erin", tokens=1234, spend=[{"model": "claude-test", "input": 10}])

    protocols = ProtocolStore(team_dir)
    stop = protocols.create("shutdown", "lead", "alice", "all done")
    plan = protocols.create("plan_approval", "bob", "lead", "1. read 2. test",
                            task=(t2.id, bob.claimed_at))
    protocols.resolve(plan.id, "plan_approval", "lead", "bob", True, "go ahead")

    mail = Mailbox(team_dir)
    mail.send("lead", "alice", "welcome")
    mail.send("alice", "lead", "parser done", "result")
    mail.ack("alice", mail.fetch("alice").cursor)
    mail.send("lead", "alice", "please stop", "shutdown_request", request_id=stop.id)
    mail.send("lead", "bob", "plan approved", "plan_approval_response",
              request_id=plan.id, approve=True)
    mail.broadcast("lead", "standup in 5", ["alice", "bob", "erin"])
    tokens = {alice.claim_token, bob.claim_token, carol.claim_token, dave.claim_token,
              erin.task.claim_token}
    return Built(expired_token=carol.claim_token or "", live_token=bob.claim_token or "",
                 drawn={t for t in tokens if t})


MEMBER_FIELDS = ("name", "role", "model", "status", "current_task", "idle_reason",
                 "require_plan", "tokens", "spend")


def picture(stores: Any) -> dict[str, Any]:
    """The team as the commands show it: tasks, events (without the backend's event ids),
    each inbox's unread messages and cursor position, members, protocol requests."""
    snap = stores.board.snapshot()
    events = [{k: v for k, v in e.items() if k != "id"} for e in stores.board.events()]
    members = [{k: getattr(m, k) for k in MEMBER_FIELDS} for m in stores.roster.members()]
    inboxes = {name: [m.model_dump() for m in stores.mail.peek(name)]
               for name in ("lead", "alice", "bob", "erin", "carol")}
    return {
        "tasks": [t.to_json() for t in snap.tasks],
        "problems": [p.message for p in snap.problems],
        "events": events,
        "inboxes": inboxes,
        "unread": {name: stores.mail.unread_count(name) for name in inboxes},
        "members": members,
        "requests": [r.model_dump() for r in stores.protocols.load()],
        "idle": {name: stores.board.idle_reason(name) for name in ("alice", "bob", "zed")},
    }


@dataclass
class PgTeam:
    """A team of this test's own on the session's server: `url` and `name` for --board and
    --team; its schema (agent_cli_<name>) is dropped at the end."""

    url: str
    name: str

    @property
    def schema(self) -> str:
        return f"agent_cli_{self.name}"

    def stores(self):
        """The team's stores on the database (the caller closes them)."""
        from agent_cli.stores import BoardLocation, open_stores

        return open_stores(Path("."), BoardLocation("postgresql", self.url, self.name))


@pytest.fixture
def pg_team(pg_cluster) -> Iterator[PgTeam]:
    """A PgTeam (import this fixture into a test module to use it)."""
    import psycopg
    from psycopg import sql

    team = PgTeam(pg_cluster.url, "m" + uuid.uuid4().hex[:12])
    yield team
    with psycopg.connect(team.url, autocommit=True) as conn:
        conn.execute("SET lock_timeout = '20s'")
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
            sql.Identifier(team.schema)))
