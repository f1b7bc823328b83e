"""The exception hierarchy: everything we raise on purpose derives from AgentCliError.

UserError is misuse we can explain in one line: the CLI prints it without a traceback and
exits with its exit_code. Model errors are typed so the runtime can decide what to do
(retry, release the task, tell the lead, show the user).
"""

from __future__ import annotations


class AgentCliError(Exception):
    """Base of every exception agent-cli raises on purpose."""


class UserError(AgentCliError):
    """Misuse explained in one line. `exit_code` is what the CLI exits with."""

    exit_code = 2

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class InvalidName(UserError):
    """A teammate or inbox name that is not a lowercase slug."""


class NotFound(UserError):
    """A task, teammate or request that does not exist."""

    exit_code = 3


class Refused(UserError):
    """A state change the rules refuse: not claimable, wrong owner, wrong token, cycle..."""

    exit_code = 4


class AlreadyRunning(Refused):
    """A spawn of a teammate that already runs in this process: the teammate is there, so a
    caller may treat it as no failure (the spawn_teammate tool does)."""


class CorruptFile(AgentCliError):
    """A state file that cannot be parsed; `path` names it."""

    def __init__(self, path: object, detail: str) -> None:
        super().__init__(f"{path}: {detail}")
        self.path = path
        self.detail = detail


class StorageError(UserError):
    """The disk refused a write (read-only, full, permission): nothing was half-written."""

    exit_code = 5


class UnusableFile(StorageError):
    """A state file that is not a regular file agent-cli may use: a symbolic link, FIFO,
    device, socket or directory, or one over its size cap. `path` names it; it is never read,
    written through or followed (writers set it aside, readers skip it)."""

    def __init__(self, path: object, detail: str) -> None:
        super().__init__(f"{path} is {detail}")
        self.path = path
        self.detail = detail


class ToolError(AgentCliError):
    """Raised by a tool handler to return a clear `is_error` tool result to the model."""


class ModelError(AgentCliError):
    """A model/API failure. `kind` names the category; `retryable` says whether waiting and
    sending the same request again may help (agent/retry.py decides); `retry_after` is the
    server's wait in seconds when it named one."""

    kind = "model"
    retryable = False

    def __init__(
        self, message: str = "", retry_after: float | None = None, retryable: bool | None = None
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        if retryable is not None:
            self.retryable = retryable


class RateLimited(ModelError):
    kind = "rate_limited"
    retryable = True


class Overloaded(ModelError):
    kind = "overloaded"
    retryable = True


class AuthFailed(ModelError):
    kind = "auth"


class BadRequest(ModelError):
    kind = "bad_request"


class ConnectionFailed(ModelError):
    kind = "connection"
    retryable = True


class ScriptExhausted(ModelError):
    """The scripted model was asked for more responses than its script holds."""

    kind = "script_exhausted"


class Interrupted(AgentCliError):
    """A turn was interrupted by the user (Ctrl-C / Esc) from another thread."""
