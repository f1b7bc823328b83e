"""The shell tool: `bash -c COMMAND` in the workdir, in its own process group.

stdout and stderr are merged and capped (head and tail kept, the cap stated in the result).
The exit code is part of the result; a non-zero exit is an is_error result, not an exception.
A timeout, or the caller's cancel event (an interrupt from another thread), kills the whole
process group within a fraction of a second. Background jobs the command leaves behind
holding the output open are stopped too, and the result says so. `run_process` is the runner
itself; with `separate_stderr=True` it keeps stdout apart (task verify compares stdout).
"""

from __future__ import annotations

import codecs
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from ..errors import ToolError
from .base import Tool, ToolContext, ToolOutput

if TYPE_CHECKING:
    from ..sandbox.manager import Sandbox

OUTPUT_CAP = 30_000
HEAD_CHARS = 20_000
POLL_S = 0.02
KILL_GRACE_S = 0.5
DRAIN_S = 1.0


class ShellInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    command: str = Field(description="The bash command line to run in the workdir")
    timeout_s: float = Field(120, gt=0, le=600, description="Seconds before it is killed (max 600)")
    dangerouslyDisableSandbox: bool = Field(  # noqa: N815 - Claude Code's name
        False, description="Only when the sandbox is on and the command must leave it "
        "(it always asks the user; set only after a boundary failure)")

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        """The flag is recorded (audit, approvals) only when it is set."""
        data = handler(self)
        if not data.get("dangerouslyDisableSandbox"):
            data.pop("dangerouslyDisableSandbox", None)
        return data


class CappedOutput:
    """Collects decoded output, keeping the first HEAD_CHARS and the last characters."""

    def __init__(self, cap: int = OUTPUT_CAP, head: int = HEAD_CHARS) -> None:
        self.cap, self.head_max, self.tail_max = cap, head, cap - head
        self.head = ""
        self.tail = ""
        self.total = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        self.total += len(text)
        room = self.head_max - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        if text:
            self.tail = (self.tail + text)[-self.tail_max :]

    def text(self) -> str:
        if self.total <= self.cap:
            return self.head + self.tail
        omitted = self.total - len(self.head) - len(self.tail)
        return (
            f"{self.head}\n... [{omitted} characters omitted: output is capped at {self.cap} "
            f"characters, showing the first {len(self.head)} and the last {len(self.tail)}] ...\n"
            f"{self.tail}"
        )


def _reader(stream: IO[bytes], out: CappedOutput, done: threading.Event) -> None:
    """Drain the pipe until EOF; the reader owns the stream and closes it."""
    try:
        while True:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                break
            out.feed(chunk)
    except OSError:
        pass
    finally:
        out.feed(b"", final=True)
        stream.close()
        done.set()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, SIGKILL it if anything is left after a short grace."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        if sig == signal.SIGTERM:
            try:
                proc.wait(KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                continue
            try:  # the leader is gone; make sure its children are too
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            return


@dataclass
class CommandResult:
    output: str  # stdout and stderr merged, or stdout alone with separate_stderr
    code: int | None  # the exit code (negative: killed by that signal)
    stopped: str  # why it was stopped early, or ""
    stderr: str = ""  # only with separate_stderr


HOST_ONLY = ("AGENT_CLI_BOARD",)  # the team's database URL: rows are the host's to write


def host_env() -> dict[str, str]:
    """The environment a model's command inherits: ours, without the team board's URL (with
    it, a command could answer its own approval or open its own plan gate in the database)."""
    return {k: v for k, v in os.environ.items() if k not in HOST_ONLY}


def no_planted_git(env: dict[str, str] | None) -> dict[str, str]:
    """The command's environment, with git told to open a bare repository only when named
    (`safe.bareRepository=explicit`): a bare repository committed into a project (its
    `config` can name an fsmonitor or a pager to run) is never picked up by a plain
    `cd evil.git && git log`. Added after any GIT_CONFIG_COUNT entries already there."""
    out = dict(os.environ if env is None else env)
    try:
        n = int(out.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        n = 0
    out.update({"GIT_CONFIG_COUNT": str(n + 1), f"GIT_CONFIG_KEY_{n}": "safe.bareRepository",
                f"GIT_CONFIG_VALUE_{n}": "explicit"})
    return out


def run_process(
    command: str,
    workdir: os.PathLike[str] | str,
    timeout_s: float,
    cancel: threading.Event,
    *,
    separate_stderr: bool = False,
    cap: int = OUTPUT_CAP,
    argv: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> CommandResult:
    """Run `command` in its own process group until it ends, times out or `cancel` is set
    (then the whole group is killed); stdout and stderr merged unless separate_stderr.
    `argv` / `env`: what runs it instead of `bash -c command` (the sandbox's wrapper)."""
    try:
        proc = subprocess.Popen(
            argv or ["bash", "-c", command],
            cwd=workdir,
            env=no_planted_git(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if separate_stderr else subprocess.STDOUT,
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        raise ToolError(f"cannot start bash: {exc}") from None
    outs = [CappedOutput(cap, cap * HEAD_CHARS // OUTPUT_CAP)]  # head and tail, as for the tool
    streams = [proc.stdout]
    if separate_stderr:
        outs.append(CappedOutput())
        streams.append(proc.stderr)
    drained = [threading.Event() for _ in streams]
    for stream, out, done in zip(streams, outs, drained, strict=True):
        threading.Thread(target=_reader, args=(stream, out, done), daemon=True).start()
    try:
        stopped = _wait(proc, time.monotonic() + timeout_s, timeout_s, cancel)
        if not _all_set(drained, DRAIN_S if not stopped else KILL_GRACE_S):
            _kill_group(proc)  # background jobs still hold the output open
            stopped = stopped or "background processes were stopped (output stayed open)"
            _all_set(drained, DRAIN_S)
        proc.wait()
    except BaseException:  # e.g. Ctrl-C in the CLI: leave nothing running behind
        _kill_group(proc)
        raise
    stderr = outs[1].text() if separate_stderr else ""
    return CommandResult(outs[0].text(), proc.returncode, stopped, stderr)


def _wait(
    proc: subprocess.Popen[bytes], deadline: float, timeout_s: float, cancel: threading.Event
) -> str:
    """Poll until the process ends; kill its group on cancel or timeout and say why."""
    while proc.poll() is None:
        stopped = ""
        if cancel.is_set():
            stopped = "interrupted by the user"
        elif time.monotonic() >= deadline:
            stopped = f"timed out after {timeout_s:g}s"
        if stopped:
            _kill_group(proc)
            return stopped
        try:
            proc.wait(POLL_S)
        except subprocess.TimeoutExpired:
            pass
    return ""


def _all_set(events: list[threading.Event], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    return all(e.wait(max(0.0, deadline - time.monotonic())) for e in events)


def run_command(
    command: str, workdir: os.PathLike[str] | str, timeout_s: float, cancel: threading.Event
) -> tuple[str, int | None, str]:
    """Run `command`; return (output, exit code or None, why it was stopped or "")."""
    res = run_process(command, workdir, timeout_s, cancel)
    return res.output, res.code, res.stopped


def run_placed(
    command: str, ctx: ToolContext, timeout_s: float, sandbox: Sandbox | None,
    disable: bool = False, *, separate_stderr: bool = False, cap: int = OUTPUT_CAP,
) -> tuple[CommandResult, str]:
    """Run `command` where the sandbox places it (inside the agent's boundary, or as
    before); return the result and the boundary failure in one line ("" when none)."""
    from ..sandbox.placement import refusal

    place = sandbox.placement(command, disable) if sandbox is not None else "off"
    why = refusal(place, sandbox)
    if why:
        raise ToolError(why)
    ws = ctx.workspace
    assert ws is not None
    extra = sandbox.command_env() if sandbox is not None else {}
    if place != "sandboxed" or sandbox is None:
        res = run_process(command, ws.cwd, timeout_s, ctx.cancel,
                          separate_stderr=separate_stderr, cap=cap,
                          env={**host_env(), **extra})
        return res, ""
    from ..sandbox.explain import explain

    wrapped = sandbox.wrap(command, ws.root, ws.cwd)
    try:
        res = run_process(command, ws.cwd, timeout_s, ctx.cancel, separate_stderr=separate_stderr,
                          cap=cap, argv=wrapped.argv, env={**wrapped.env, **extra})
    finally:
        wrapped.done()
    if res.code == 0 and not wrapped.blocked:
        return res, ""  # a success is not explained (its output may quote any error text)
    seen = res.output + "\n" + res.stderr
    return res, explain(seen, wrapped.box, ws.cwd, wrapped.blocked)


def shell(args: ShellInput, ctx: ToolContext, sandbox: Sandbox | None = None) -> ToolOutput:
    if "\x00" in args.command:
        raise ToolError("command contains a NUL byte")
    if not args.command.strip():
        raise ToolError("command is empty")
    res, boundary = run_placed(args.command, ctx, args.timeout_s, sandbox,
                               args.dangerouslyDisableSandbox)
    output, code, stopped = res.output, res.code, res.stopped
    body = output.rstrip("\n") or "(no output)"
    if boundary:
        body += f"\n[sandbox: {boundary}]"
    if stopped and not stopped.startswith("background"):
        return ToolOutput(
            f"{body}\n[command {stopped}; its process group was killed]", is_error=True
        )
    if code is not None and code < 0:
        status = f"killed by signal {-code}"
    else:
        status = f"exit {code}"
    note = f"; {stopped}" if stopped else ""
    return ToolOutput(f"{body}\n[{status}{note}]", is_error=code != 0)


def shell_tool(sandbox: Sandbox | None = None) -> Tool:
    """The shell tool; with a `sandbox`, each command runs where it places it."""
    return Tool(
        "shell",
        "Run a bash command in the workdir (stdout and stderr merged, output capped at "
        f"{OUTPUT_CAP} characters). timeout_s defaults to 120, at most 600. Non-interactive: "
        "stdin is empty; background jobs are stopped when the command ends.",
        ShellInput,
        (lambda args, ctx: shell(args, ctx, sandbox)) if sandbox is not None else shell,
        permission="Bash",
        rule_target=lambda a: a.command,
        preview=lambda a, ctx: a.command,
    )
