"""Host-verified completion: a task with a `verify` completes only when its check passes.

The verify command goes through the same permission gate as any shell run (the human is asked
where the rules say so; the approval's purpose reads "task #3 verify, written by alice"), then
runs in the workdir through the shell tool's runner (its own process group, stopped by the
caller's cancel event or the timeout). Every verify decision is also recorded in the audit log
with who wrote the command (`record_verify`). `check_verify` is the comparison alone; the
command line (`agent-cli tasks complete`) asks its own question first (commands/verify_cli.py).
The stripped stdout is compared with the expectation (inline or from a file), the exit code
with the expected one. Saying "done" completes nothing.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..agent.tool_hooks import pre_tool_use
from ..errors import Refused, ToolError
from ..models.base import ToolUseBlock
from ..tools.base import ToolContext
from ..tools.confined import read_bytes_in
from ..tools.shell import run_placed, shell_tool

if TYPE_CHECKING:
    from ..board.models import Task, Verify
    from ..permissions.audit import AuditLog
    from ..runtime import Runtime
    from ..sandbox.manager import Sandbox

VERIFY_TIMEOUT_S = 120.0
VERIFY_OUTPUT_CAP = 1_000_000  # characters of stdout kept for the comparison
_SHOWN = 200
EXPECTED_CAP = 8 << 20  # bytes of expected_stdout_file read


class VerifyFailed(ToolError):
    """complete_task refused because the host's verify did not pass; `detail` says how."""

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        self.detail = detail


@dataclass
class VerifyOutcome:
    passed: bool
    detail: str  # why it failed, or a one-line summary when it passed
    denied: bool = False  # the gate refused to run the command


def _shown(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "...")


def _expected_stdout(verify: Verify, workdir: Path) -> str | None:
    if verify.expected_stdout is not None:
        return verify.expected_stdout
    if not verify.expected_stdout_file:
        return None
    try:  # walked inside the workdir without following links out; a FIFO is an error
        data, _shown = read_bytes_in(workdir, verify.expected_stdout_file, EXPECTED_CAP)
        return data.decode("utf-8", errors="replace")
    except ToolError as exc:
        raise ToolError(f"cannot read expected_stdout_file {verify.expected_stdout_file}: {exc}"
                        ) from None


def check_verify(
    verify: Verify, workdir: Path, cancel: threading.Event | None = None,
    sandbox: Sandbox | None = None,
) -> VerifyOutcome:
    """Run `verify.command` in `workdir` and compare: no gate, no runtime (the caller decided
    that it may run). With an enabled `sandbox` it runs inside the boundary of `workdir`
    (a task's worktree, or the workdir) like any shell command. Stops the command's whole
    process group when `cancel` is set or after VERIFY_TIMEOUT_S. Never raises for a
    failing check; ToolError only for a verify that cannot be evaluated at all (its
    expected_stdout_file is unreadable or outside the workdir)."""
    expected = _expected_stdout(verify, workdir)
    ctx = ToolContext(agent="verify", workdir=Path(workdir), cancel=cancel or threading.Event())
    res, boundary = run_placed(verify.command, ctx, VERIFY_TIMEOUT_S, sandbox,
                               separate_stderr=True, cap=VERIFY_OUTPUT_CAP)
    if res.stopped and not res.stopped.startswith("background"):
        return VerifyOutcome(False, f"verify command {res.stopped}")
    problems = []
    if expected is not None and res.output.strip() != expected.strip():
        problems.append(f"expected stdout {_shown(expected)}, got {_shown(res.output)}")
    want_code = verify.expected_exit_code
    if want_code is not None and res.code != want_code:
        err = f" (stderr {_shown(res.stderr)})" if res.stderr.strip() else ""
        problems.append(f"expected exit code {want_code}, got {res.code}{err}")
    if problems:
        if boundary:
            problems.append(f"sandbox: {boundary}")
        return VerifyOutcome(False, "; ".join(problems))
    return VerifyOutcome(True, f"`{verify.command}` passed")


def verify_purpose(task: Task, workdir: Path | None = None) -> str:
    """"task #3 verify" plus who wrote the command, for the approval and the audit. A
    person named by the task file (`cli`) but not by the host-private record is shown as a
    claim (board/verify_authors.py): a task file can say anything."""
    from ..board.verify_authors import HUMAN_WRITERS, VerifyAuthors

    assert task.verify is not None
    who = task.verify.set_by or "an unknown writer (an older task file)"
    if workdir is not None and who in HUMAN_WRITERS:
        if VerifyAuthors(workdir).writer(task) not in HUMAN_WRITERS:
            who = f"{who} according to its task file (not proved)"
    return f"task #{task.id} verify, written by {who}"


def record_verify(
    audit: AuditLog, task: Task, agent: str, allowed: bool, source: str, detail: str = ""
) -> None:
    """One audit line per verify decision: what runs, for which task, and who wrote it."""
    assert task.verify is not None
    audit.record(
        agent=agent,
        tool="verify",
        input={"task_id": task.id, "command": task.verify.command},
        decision="allow" if allowed else "deny",
        source=source,
        verify_set_by=task.verify.set_by or "unknown",
        purpose=f"task #{task.id} verify",
        **({"feedback": detail} if detail else {}),
    )


def ask_verify(runtime: Runtime, task: Task, ctx: ToolContext, gate=None) -> VerifyOutcome | None:
    """The gate's answer for running the task's verify (purpose "task #N verify, written by
    X"), recorded in the audit log: None when it may run, else the refusal as an outcome."""
    assert task.verify is not None
    shell = shell_tool(getattr(runtime, "sandbox", None))
    args = shell.parse({"command": task.verify.command})
    vctx = replace(ctx, purpose=verify_purpose(task, runtime.workdir))
    # PreToolUse hooks see the verify command as the shell call it is.
    use = ToolUseBlock(id=f"verify_task_{task.id}", name=shell.name,
                       input={"command": task.verify.command})
    # (its updatedInput is not applied: the task's verify command is the board's, not the hook's)
    hook, refusal = pre_tool_use(getattr(runtime, "hooks", None), ctx.agent, use, ctx.cancel,
                                 ctx.workspace.root if ctx.workspace else None)
    if refusal is not None:
        return VerifyOutcome(False, f"verify command was not run: {refusal.content}", True)
    extra = {"hook": hook.permission} if hook is not None and hook.permission else {}
    decision = (gate or runtime.gate).check(shell, args, vctx, **extra)
    record_verify(runtime.audit, task, ctx.agent, decision.allowed, decision.source)
    if not decision.allowed:
        return VerifyOutcome(False, f"verify command was not run: {decision.message}", True)
    return None


def run_verify(runtime: Runtime, task: Task, ctx: ToolContext, gate=None) -> VerifyOutcome:
    """Ask the gate, then check_verify with the caller's cancel event: Esc, Ctrl-C, a
    shutdown or the timeout stop the command."""
    verify = task.verify
    assert verify is not None
    refused = ask_verify(runtime, task, ctx, gate)
    if refused is not None:
        return refused
    return check_verify(verify, runtime.workdir, ctx.cancel,
                        sandbox=getattr(runtime, "sandbox", None))


def _completion_hook(runtime: Runtime, ctx: ToolContext, task: Task, result: str) -> None:
    """TaskCompleted hooks may refuse a completion, exactly like a failed verify."""
    hooks = getattr(runtime, "hooks", None)
    if hooks is None:
        return
    why = hooks.refusal("TaskCompleted", ctx.agent, {
        "task": {"id": task.id, "subject": task.subject}, "task_id": task.id,
        "task_subject": task.subject, "task_description": task.description, "result": result,
    }, ctx.cancel)
    if why is None:
        return
    detail = f"TaskCompleted hook: {why}"
    runtime.board.verify_failed(task, ctx.agent, detail)
    raise ToolError(f"task #{task.id} not completed: {detail}. It stays in_progress with you; "
                    "fix the cause and call complete_task again.")


def complete_verified(
    runtime: Runtime, ctx: ToolContext, task_id: int, claim_token: str, result: str, gate=None
) -> str:
    """complete_task for `ctx.agent`: check ownership, run the verify, then complete.

    Returns the tool result text; raises ToolError (an is_error result) when the task is not
    the caller's, when the verify fails, or when the board refuses. The task then stays
    in_progress with its owner.
    """
    owner = ctx.agent
    stale = runtime.board.stale_claim(task_id, owner, claim_token)
    if stale is not None:  # "lease expired" says more than "not yours"
        raise stale
    task = runtime.board.get(task_id)
    if task.status != "in_progress" or task.owner != owner:
        holder = f"owned by {task.owner}" if task.owner else task.status
        raise Refused(f"task {task_id} is not yours to complete ({holder})")
    if task.claim_token != claim_token:
        raise Refused(f"wrong claim_token for task {task_id}")
    if task.verify is not None:
        outcome = run_verify(runtime, task, ctx, gate)
        if not outcome.passed:
            runtime.board.verify_failed(task, owner, outcome.detail)
            raise VerifyFailed(
                f"task #{task_id} not completed: {outcome.detail}. "
                "It stays in_progress with you; fix the cause and call complete_task again.",
                outcome.detail,
            )
    _completion_hook(runtime, ctx, task, result)
    done = runtime.board.complete(task_id, owner, claim_token, result, actor=owner)
    text = f"task #{task_id} completed"
    if task.verify is not None:
        text += " (verify passed)"
    if done.unblocked:
        text += "; now claimable: " + ", ".join(f"#{i}" for i in done.unblocked)
    return text
