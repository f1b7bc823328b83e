"""TrackingGate: the shared permission gate as one teammate sees it.

It remembers the teammate's denials (so the teammate can say why it holds an unfinished task:
"holds #3: shell run was denied"), and refuses effectful tools while the teammate's plan is
one the protocol store lost (requests.json was unreadable and set aside) but the teammate
remembers as pending or rejected: the shared gate would find no plan there and open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .teammate import Teammate


class TrackingGate:
    """Wraps `gate` (anything with check(tool, args, ctx)) for `teammate`."""

    def __init__(self, gate, teammate: Teammate) -> None:
        self._gate = gate
        self._teammate = teammate

    def check(self, tool, args, ctx):
        decision = None
        if not tool.read_only and not tool.plan_exempt:
            decision = self._lost_plan_refusal(tool, args, ctx)
        if decision is None:
            decision = self._gate.check(tool, args, ctx)
        if not decision.allowed:
            self._teammate.note_denial(tool, decision)
        return decision

    def __getattr__(self, name: str):
        return getattr(self._gate, name)

    def _lost_plan_refusal(self, tool, args, ctx):
        """The plan gate for a plan the store lost (set aside) but this teammate remembers;
        None when the store still knows it (the shared gate decides then)."""
        from ..permissions.gate import Decision

        why = self._teammate.lost_plan_block()
        if why is None:
            return None
        audit = getattr(self._gate, "audit", None)
        if audit is not None:
            audit.record(
                agent=ctx.agent,
                tool=tool.name,
                input=args.model_dump(mode="json"),
                decision="deny",
                source="plan",
                feedback="",
            )
        return Decision(False, "plan", why)
