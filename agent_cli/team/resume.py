"""Start or resume a session: `--continue` / `--resume ID` pick a team up where it stopped.

A new session gets an id and a directory (sessions.py). Resuming one takes it over in this
process and restarts every teammate it spawned that was not shut down on request: those
still running when it ended (or crashed) come back with the same name, role, model and
plan setting, their own transcript (team/agents.py resumes it) and, when their lease is
still live, the task they held — their roster entries are taken over by this process before
any board operation, so the board does not see them as gone and take their tasks back. The
lead's conversation comes back from the session's `lead.jsonl` (Team.make_lead).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import AgentCliError, NotFound, Refused
from ..events import Notice
from ..fsutil import utc_now
from ..names import LEAD
from .liveness import pid_ended, this_host
from .sessions import Session, SessionStore

if TYPE_CHECKING:
    from ..runtime import Runtime
    from .roster import Member


def start_session(rt: Runtime, mode: str, defer: bool = False) -> Session | None:
    """Open the session `rt.config.session` asks for ("new", "continue" or an id). With
    `defer` (the REPL: its approval UI is not attached yet) the teammates' roster entries are
    taken over now and the teammates start at `resume_pending`."""
    ref = rt.config.session
    if ref is None:
        return None
    store = SessionStore(rt.team_dir)
    if ref == "new":
        session = store.create(mode)
        rt.session = session
        _cleanup(rt)
        return session
    session = store.latest() if ref == "continue" else store.find(ref)
    if session is None:
        raise NotFound("no session to continue in this workdir (start one without -c)")
    _take_over(store, session)
    rt.session = session
    _cleanup(rt)
    members = claim_members(rt, session)
    if defer:
        rt.resuming = members
    else:
        spawn_members(rt, session, members)
    return session


def resume_pending(rt: Runtime) -> list[str]:
    """Start the teammates a deferred start_session took over (once)."""
    members, rt.resuming = rt.resuming, []
    if rt.session is None or not members:
        return []
    return spawn_members(rt, rt.session, members)


def _take_over(store: SessionStore, session: Session) -> None:
    if session.pid and session.pid != os.getpid() and session.host == this_host():
        if not session.ended_at and not pid_ended(session.pid):
            raise Refused(f"session {session.id} is still running in process {session.pid}")
    session.pid, session.host = os.getpid(), this_host()
    session.resumed_at, session.ended_at = utc_now(), None
    store.save(session)


def resumable(rt: Runtime, session: Session) -> list[Member]:
    """The session's teammates to restart: not shut down on request, not failed, not run
    by another live process."""
    members = {m.name: m for m in rt.roster.members()}
    found = []
    for name in session.team:
        m = members.get(name)
        if m is None or name == LEAD:
            continue
        if name not in session.suspended and m.status in ("shutdown", "failed"):
            continue
        if rt.roster.is_alive(m) and m.pid != os.getpid():
            _note(rt, f"{name} is running in process {m.pid}: not resumed here")
            continue
        found.append(m)
    return found


def resume_team(rt: Runtime, session: Session) -> list[str]:
    """Restart the session's teammates (see the module docstring); their names."""
    return spawn_members(rt, session, claim_members(rt, session))


def claim_members(rt: Runtime, session: Session) -> list[Member]:
    """The teammates to resume, their roster entries now this process's: a board operation
    must not find them gone and take their leases back before they start."""
    members = resumable(rt, session)
    for m in members:
        rt.roster.update(m.name, pid=os.getpid(), host=this_host())
    return members


def spawn_members(rt: Runtime, session: Session, members: list[Member]) -> list[str]:
    started = []
    for m in members:
        try:
            rt.team.spawn(m.name, m.role, model=m.model, require_plan=m.require_plan)
        except AgentCliError as exc:
            _note(rt, f"could not resume {m.name}: {exc}")
            continue
        started.append(m.name)
    session.suspended = []
    SessionStore(rt.team_dir).save(session)
    if started:
        _note(rt, f"resumed session {session.id}: {', '.join(started)}")
    return started


def end_session(rt: Runtime, running: list[str]) -> None:
    """Record who was still running when the session ended (they come back on resume)."""
    session = rt.session
    if session is None:
        return
    if session.empty and not session.resumed_at and not running:
        SessionStore(rt.team_dir).discard(session)  # nothing to come back to: not recorded
        return
    session.suspended = sorted(set(session.suspended) | set(running))
    session.ended_at = utc_now()
    try:
        SessionStore(rt.team_dir).save(session)
    except (AgentCliError, OSError) as exc:
        _note(rt, f"could not record the end of session {session.id}: {exc}")


def _cleanup(rt: Runtime) -> None:
    """cleanupPeriodDays (team/cleanup.py), once the running session is known; what it
    removed (or could not) is said at start with the settings notes."""
    from .cleanup import at_start

    try:
        lines = at_start(rt)
    except (AgentCliError, OSError) as exc:  # never stops a start
        lines = [f"cleanupPeriodDays: nothing removed ({exc})"]
    if lines:
        rt.settings_notes = [*getattr(rt, "settings_notes", []), *lines]


def _note(rt: Runtime, text: str) -> None:
    rt.events.emit(Notice(agent=LEAD, text=text))
