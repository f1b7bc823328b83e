"""`agent-cli teammate NAME`: this process joins the team of DIR as one teammate.

It opens a session on DIR through the composition root and starts the one teammate with
Team.spawn: the same thread, idle loop, claims, lease renewer, shutdown and plan protocols
as a teammate the lead spawns (its roster entry carries this process's pid and host). It
prints one line per thing the teammate does (commands/teammate_lines.py) and ends when the
teammate ends: a shutdown request (exit 0), a failure (exit 1). Ctrl-C or SIGTERM asks it to
shut down through the same protocol: its task is released with the reason "shutdown" and the
lead told; a task still held after the grace period is released here. A SIGKILL leaves the
task to its lease (on this host the pid check ends it at once, elsewhere the lease expiry).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import AgentCliError, UserError
from ..names import LEAD, check_name

if TYPE_CHECKING:
    from ..runtime import Runtime, RuntimeConfig
    from ..team.teammate import Teammate

REMOTE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
STOP_GRACE_S = 10.0  # Ctrl-C / SIGTERM: how long the teammate gets to shut down itself
ConfigOf = Callable[[argparse.Namespace], "RuntimeConfig"]


def add_parser(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser,
               options: list[Callable[[argparse.ArgumentParser], None]],
               config_of: ConfigOf) -> None:
    """Register `teammate`; `options` add the model and permission flags -p has, and
    `config_of` turns the parsed flags into the RuntimeConfig (cli.runtime_config)."""
    p = sub.add_parser(
        "teammate", parents=[parent],
        help="join the team of DIR as teammate NAME from this process (this host)",
        description="Run one teammate in this process: it joins the team of DIR (-C), claims "
        "what the board lets it claim, works with its own tools and permission rules, renews "
        "its leases and honours shutdown and plan approval requests. One line is printed per "
        "thing it does. Ctrl-C or SIGTERM shuts it down (its task released).")
    p.add_argument("name", metavar="NAME", help="the teammate's name (e.g. bob)")
    p.add_argument("--role", default="teammate", metavar="R",
                   help="its role (routing: tasks for a role; an agent type's name)")
    p.add_argument("--require-plan", action="store_true",
                   help="it must have a plan approved by the lead before any change")
    p.add_argument("--remote", default=None, metavar="NAME",
                   help="git remote its task branches are pushed to after completing "
                   "(default: origin with --board URL, else none: the task lands here)")
    p.add_argument("--lease", type=_seconds, default=None, metavar="S",
                   help="claim lease in seconds, renewed while it runs "
                   "(default: $AGENT_CLI_LEASE_S, else 600)")
    p.add_argument("--idle-timeout", type=_seconds_or_zero, default=60.0, metavar="S",
                   help="seconds before the idle teammate notifies the lead (0 = never)")
    for add in options:
        add(p)
    p.set_defaults(handler=lambda args: run_teammate(args, config_of))


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: use a finite number of seconds")
    return value


def _seconds(text: str) -> float:
    """argparse type: seconds above 0 (--lease)."""
    value = _number(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: use a number of seconds above 0")
    return value


def _seconds_or_zero(text: str) -> float:
    """argparse type: seconds, 0 meaning never (--idle-timeout)."""
    return _number(text)


def teammate_config(args: argparse.Namespace, config_of: ConfigOf) -> RuntimeConfig:
    """The session's config for one teammate process: -p's flags and settings, no lead."""
    config = config_of(args)
    return config


def push_remote(args: argparse.Namespace, config: RuntimeConfig) -> str | None:
    """Where task branches go: --remote, else origin when the board is not DIR's files."""
    if args.remote is not None:
        return check_remote(args.remote)
    return "origin" if config.board else None


def check_remote(name: str) -> str:
    """A git remote's name (never a URL, a path or an option)."""
    if not REMOTE_RE.fullmatch(name):
        raise UserError(f"--remote {name!r}: give the name of a git remote (e.g. origin)")
    return name


def run_teammate(args: argparse.Namespace, config_of: ConfigOf) -> int:
    from ..app import open_runtime
    from .teammate_lines import ActivityLines, AnnouncingBroker
    from .workdir import workdir_of

    name = check_name(args.name, "teammate name")
    if name == LEAD:
        raise UserError("'lead' is the lead's own name; pick another teammate name")
    config = teammate_config(args, config_of)
    remote = push_remote(args, config)
    lines = ActivityLines(name, _say)
    inner = config.broker_factory  # tests inject one

    def broker(rt: Runtime):
        return AnnouncingBroker(inner(rt) if inner is not None else _own_broker(rt),
                                lines.waiting)

    config.broker_factory = broker
    previous = signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM is Ctrl-C from here on
    try:
        rt = open_runtime(workdir_of(args), config)
        try:
            rt.events.subscribe(lines.on_event)
            if hasattr(rt.broker, "queue"):  # a remote broker: its questions withdrawn at exit
                rt.closers.append(rt.broker.close)
            for warning in start_warnings(rt):
                _say(f"warning: {warning}")
            if remote is not None:
                _push_to(rt, remote, explicit=args.remote is not None)
            mate = _join(rt, name, args)
            return _wait(rt, mate)
        finally:
            rt.close(timeout=STOP_GRACE_S)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _own_broker(rt: Runtime):
    """On a database board the lead's human answers what the rules leave open (through the
    database: pg/approvals.RemoteBroker, which waits, saying so, while no lead listens);
    on the workdir's files nobody can answer here: refused at once, as headless."""
    if rt.stores.database is not None:
        from ..pg.approvals import RemoteBroker
        from ..team.roster import this_host

        return RemoteBroker(rt.stores.database, this_host(), on_status=_say)
    from ..permissions.broker import ApprovalBroker

    return ApprovalBroker()


def start_warnings(rt: Runtime) -> list[str]:
    """What this session cannot honour or holds back, said once at start (as the lead's
    session start says it): hooks, an unavailable sandbox, settings, state, held settings."""
    found = [f"hooks: {w}" for w in rt.hook_warnings]
    if rt.sandbox.enabled and not rt.sandbox.availability.ok:
        found.append(rt.sandbox.banner())
    found += [f"settings: {n}" for n in rt.settings_notes]
    found += [f"state: {w}" for w in rt.state_warnings]
    if rt.held_settings is not None:
        from ..permissions.project_trust import warning_line

        found.append(warning_line(rt.held_settings, len(rt.held_hooks.specs)
                                  if rt.held_hooks is not None else 0))
    return found


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _push_to(rt: Runtime, remote: str, explicit: bool = True) -> None:
    """Task branches are pushed to `remote` after completing (needs worktrees, in git).
    Asked for (--remote) and impossible: refused. The default of a database board (origin)
    where DIR is not such a checkout: said once, and the changes stay in DIR."""
    wt = rt.worktrees
    problem = ""
    if not wt.enabled:
        problem = (f"the task branches need worktrees, and {rt.workdir} "
                   f"{'has them off' if wt.mode == 'off' else 'is not in git'}")
    elif wt.repo is None or wt.repo.run("remote", "get-url", remote,
                                        check=False).returncode != 0:
        top = wt.repo.top if wt.repo is not None else rt.workdir
        problem = f"no such git remote in {top} (see `git remote -v`)"
    if problem and explicit:
        raise UserError(f"--remote {remote}: {problem}")
    if problem:
        _say(f"note: task changes stay in {rt.workdir}, nothing is pushed ({problem}; "
             "give --remote NAME to push task branches)")
        return
    wt.set_remote(remote)


def _join(rt: Runtime, name: str, args: argparse.Namespace) -> Teammate:
    from ..team.roster import this_host

    member = rt.team.spawn(name, args.role, model=rt.config.model,
                           require_plan=args.require_plan)
    mate = rt.team.teammate(name)
    assert mate is not None
    where = f" on {this_host()} (pid {os.getpid()})"
    _say(f"{name} joined team {rt.roster.team_name} as {member.role}{where}; "
         f"model {rt.model_name(name, rt.config.model)}")
    return mate


def _wait(rt: Runtime, mate: Teammate) -> int:
    """Until the teammate ends; Ctrl-C / SIGTERM shut it down first (exit 130)."""
    ended = threading.Event()

    def watch() -> None:
        mate.thread.join()
        ended.set()

    threading.Thread(target=watch, name="teammate-watch", daemon=True).start()
    try:
        while not ended.wait(3600):  # the signal handlers run during the wait
            pass
    except KeyboardInterrupt as exc:
        _stop(rt, mate, str(exc) or "Ctrl-C")
        return 130
    rt.team.status.flush(STOP_GRACE_S)
    member = rt.roster.get(mate.name)
    return 1 if member is not None and member.status == "failed" else 0


def _stop(rt: Runtime, mate: Teammate, why: str) -> None:
    """Shut the teammate down through the protocol (its task released, the lead told); a
    task it still holds after the grace period is released here with the reason."""
    _say(f"stopping ({why}): {mate.name} shuts down")
    team = rt.team
    team.claims.close(1.0)
    try:
        team.request_shutdown(mate.name)
    except AgentCliError as exc:  # a full disk, or it ended meanwhile
        _say(f"could not ask {mate.name} to shut down: {exc}")
    mate.agent.interrupt()  # a model call, a shell command or an approval wait stops now
    team.shutdown_all(STOP_GRACE_S)
    try:
        held = rt.board.held_by(mate.name)
        if held is not None:
            rt.board.release(held.id, mate.name,  # its line comes from the board's event
                             reason=f"{mate.name}'s process was stopped ({why})")
    except AgentCliError as exc:
        _say(f"could not release its task: {exc}; it returns when its lease expires")


def _say(text: str) -> None:
    print(text, flush=True)
