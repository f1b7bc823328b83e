"""A teammate's intake of its inbox: each message taken in once, acknowledged only after.

The mailbox is at-least-once: a message fetched but not yet acknowledged comes back on the
next fetch. Intake remembers the ids it has already delivered (so a redelivery is dropped),
holds ordinary messages that arrived mid-turn until the next turn can take them in (their ids
go into the transcript record of that turn, so the memory survives a restart), and
acknowledges the inbox cursor only when nothing it fetched is still waiting to be injected.
A fetch is skipped while the inbox's stamp has not changed, so an idle check costs one stat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..agent.delivered import Delivered
    from .mailbox import Mailbox, MailMessage


class Intake:
    def __init__(self, mail: Mailbox, name: str) -> None:
        self._mail = mail
        self._name = name
        self._seen: set[str] = set()
        self.durable: Delivered | None = None  # the agent's: ids in its transcript
        self._held: list[MailMessage] = []
        self._cursor: int | None = None
        self._acked: int | None = None
        self._stamp: tuple | None = None

    def poll(self) -> list[MailMessage]:
        """Messages not delivered before, oldest first (empty when the inbox is unchanged)."""
        stamp = self._mail.stamp(self._name)
        if stamp == self._stamp:
            return []
        delivery = self._mail.fetch(self._name)
        self._stamp = stamp  # taken before the fetch: a send in between is seen next time
        self._cursor = delivery.cursor
        durable = self.durable if self.durable is not None else ()
        fresh = [m for m in delivery.messages if m.id not in self._seen and m.id not in durable]
        self._seen.update(m.id for m in fresh)
        return fresh

    def hold(self, msg: MailMessage) -> None:
        """Keep an ordinary message for the next turn."""
        self._held.append(msg)

    def has_held(self) -> bool:
        return bool(self._held)

    def take_held(self) -> list[MailMessage]:
        """The held messages, handed over for injection (ack once they are in the turn)."""
        held, self._held = self._held, []
        self.deliver([m.id for m in held])
        return held

    def deliver(self, ids: list[str]) -> None:
        """These ids go into the agent's next user turn, recorded with it in the transcript."""
        if self.durable is not None and ids:
            self.durable.add_pending(ids)

    def ack(self) -> None:
        """Acknowledge everything fetched so far, unless some of it still waits to be injected."""
        if self._held or self._cursor is None or self._cursor == self._acked:
            return
        self._mail.ack(self._name, self._cursor)
        self._acked = self._cursor
