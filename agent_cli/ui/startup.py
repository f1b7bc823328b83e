"""What the REPL says when it starts: the banner (model, workdir, the offline-demo hint) and
the offer to release tasks still held by teammates of an earlier session that are not running.
"""

from __future__ import annotations

import os
from typing import Any

from rich.text import Text

from .. import __version__
from ..errors import AgentCliError, UserError

DEMO_HINT = "offline demo model — set ANTHROPIC_API_KEY to use Claude"


def banner(runtime: Any, model_name: str) -> Text:
    text = Text()
    text.append("agent-cli ", style="bold")
    text.append(f"{__version__} · model ")
    text.append(model_name, style="bold cyan")
    text.append(f" · {runtime.workdir}\n", style="dim")
    hint = demo_hint(runtime)
    if hint:
        text.append(hint + "\n", style="yellow")
    session = getattr(runtime, "session", None)
    if session is not None and session.resumed_at:
        names = [m.name for m in getattr(runtime, "resuming", [])]
        team = f"resuming {', '.join(names)}" if names else "no teammates to resume"
        text.append(f"resumed session {session.id} ({team})\n", style="green")
    try:  # one line: task worktrees, or teammates sharing the workdir
        text.append(runtime.worktrees.banner_line() + "\n", style="dim")
    except AgentCliError as exc:
        text.append(f"worktrees: {exc}\n", style="red")
    sandbox = getattr(runtime, "sandbox", None)
    line = sandbox.banner() if sandbox is not None else ""
    if line:
        text.append(line + "\n", style="dim" if sandbox.active else "yellow")
    text.append("/help for commands · !CMD runs a shell command · Shift+Tab cycles modes · "
                "Ctrl-D exits", style="dim")
    return text


def demo_hint(runtime: Any, env: Any = os.environ) -> str | None:
    if runtime.config.model_factory is not None:
        return None
    from ..models.registry import DEMO, has_credentials

    if runtime.model_spec() != DEMO:
        return None
    if runtime.config.model is None and not has_credentials(env):
        return DEMO_HINT
    return "offline demo model"


def stale_tasks(runtime: Any) -> list[Any]:
    """In-progress tasks owned by teammates that are not running in this session (a workdir
    whose `.tasks/` provably holds no task builds no board for the answer)."""
    from ..board.presence import may_hold_tasks

    files = getattr(getattr(runtime, "location", None), "kind", "files") == "files"
    if files and not may_hold_tasks(runtime.tasks_dir):  # the probe knows files only
        return []
    held = [t for t in runtime.board.snapshot().tasks
            if t.status == "in_progress" and t.owner and t.owner != "lead"]
    if not held:
        return []
    running = set(runtime.team.running()) | {m.name for m in getattr(runtime, "resuming", [])}
    try:  # teammates that another live process runs (pid and host in config.json)
        running |= {m.name for m in runtime.roster.members() if runtime.roster.is_alive(m)}
    except AgentCliError:
        pass  # an unreadable config.json: only this process's teammates count as running
    return [t for t in held if t.owner not in running]


def stale_question(tasks: list[Any]) -> Text:
    held = ", ".join(f"#{t.id} (@{t.owner})" for t in tasks)
    return Text(
        f"{len(tasks)} task(s) in progress for teammates that are not running: {held}",
        style="yellow",
    )


def release_all(runtime: Any, tasks: list[Any]) -> Text:
    """Release each task; the board announces each release, so only failures are returned."""
    out = Text()
    for t in tasks:
        try:
            runtime.board.release(t.id, t.owner, reason="released at start-up: owner not running")
        except UserError as exc:
            out.append(f"could not release #{t.id}: {exc}\n", style="red")
    out.rstrip()
    return out


def current_work(runtime: Any, agent: str) -> str:
    """"task #3 write tests" for a teammate holding a task (why it asks), else ""."""
    try:
        task = runtime.board.held_by(agent) if agent != "lead" else None
    except Exception:  # only decoration for the approval headline
        return ""
    return f"task #{task.id} {task.subject}" if task is not None else ""
