"""The task board's data: a Task as stored in `.tasks/task_<id>.json`, and the small results
the board hands back (snapshot, claim, completion, problems).

Tasks are frozen pydantic models so a cached snapshot can be shared between threads; a change
is a `model_copy(update=...)` written by the store. The on-disk JSON uses the field names of
`.tasks/README.md` (`blockedBy`); Python code uses `blocked_by`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
    model_validator,
)

from ..fsutil import parse_json
from ..names import NAME_RE

TaskStatus = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed")


class Verify(BaseModel):
    """How the host checks a completion (the team layer runs it in the workdir)."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    command: str = Field(min_length=1)
    expected_stdout: str | None = None  # compared with stdout, both .strip()'d
    expected_stdout_file: str | None = None  # workdir-relative file holding the expected stdout
    expected_exit_code: int | None = 0
    # Who wrote `command`: a member name (a model, through create_task), or "cli" / "user"
    # for a person at the command line. None in task files written before it was recorded.
    set_by: str | None = None

    @field_validator("command")
    @classmethod
    def _command_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("verify command is empty")
        return value

    @field_validator("expected_stdout_file")
    @classmethod
    def _relative_path(cls, value: str | None) -> str | None:
        if value is None:
            return None
        path = PurePosixPath(value)
        if not value or path.is_absolute() or ".." in path.parts or "\x00" in value:
            raise ValueError(f"expected_stdout_file {value!r} must be a path inside the workdir")
        return value

    @model_validator(mode="after")
    def _one_expectation(self) -> Verify:
        if self.expected_stdout is not None and self.expected_stdout_file is not None:
            raise ValueError("give expected_stdout or expected_stdout_file, not both")
        return self


class Task(BaseModel):
    """One task. Invariants: pending has no owner and no token; in_progress has both;
    completed keeps its owner and drops the token."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid", populate_by_name=True)

    id: int = Field(ge=1)
    subject: str = Field(min_length=1)
    description: str = ""
    status: TaskStatus = "pending"
    owner: str | None = None
    blocked_by: list[int] = Field(default_factory=list, alias="blockedBy")
    created_at: str
    updated_at: str
    claimed_at: str | None = None
    claim_token: str | None = None
    lease_expires_at: str | None = None  # claim valid over [claimed_at, lease_expires_at)
    result: str | None = None
    verify: Verify | None = None
    assignee: str | None = None  # only this member may claim it (board/routing.py)
    role: str | None = None  # only members of this role may claim it
    require_plan: StrictBool = False  # its holder needs a plan approved for this task first

    @field_validator("owner", "assignee")
    @classmethod
    def _owner_is_slug(cls, value: str | None) -> str | None:
        if value is not None and not NAME_RE.fullmatch(value):
            raise ValueError(f"{value!r} is not a valid name")
        return value

    @field_validator("role")
    @classmethod
    def _role_is_one_line(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or "\n" in value or len(value) > 200):
            raise ValueError("role must be one non-empty line of at most 200 characters")
        return value

    @model_validator(mode="after")
    def _status_invariants(self) -> Task:
        if self.status == "pending" and (self.owner or self.claim_token):
            raise ValueError("a pending task has no owner and no claim_token")
        if self.status == "in_progress" and not (self.owner and self.claim_token):
            raise ValueError("an in_progress task needs an owner and a claim_token")
        if self.status == "completed" and (not self.owner or self.claim_token):
            raise ValueError("a completed task keeps its owner and has no claim_token")
        return self

    @model_validator(mode="after")
    def _lease_only_while_claimed(self) -> Task:
        if self.lease_expires_at is not None and self.status != "in_progress":
            raise ValueError("only an in_progress task has a lease_expires_at")
        return self

    def to_json(self) -> dict[str, Any]:
        """The object as written on disk (`blockedBy`; `verify`, `assignee`, `role` and
        `require_plan` only when set, so a task without them reads as it always did)."""
        data = self.model_dump(mode="json", by_alias=True)
        for key in ("verify", "assignee", "role"):
            if data.get(key) is None:
                data.pop(key, None)
        if not data.get("require_plan"):
            data.pop("require_plan", None)
        if "verify" in data and data["verify"].get("set_by") is None:
            data["verify"].pop("set_by", None)  # unknown: written as before it was recorded
        return data


class Problem(BaseModel):
    """Something wrong on disk, named by path: a corrupt file or a broken dependency."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    path: str
    task_id: int | None = None
    message: str

    def line(self) -> str:
        where = f"#{self.task_id} " if self.task_id is not None else ""
        return f"{where}{self.path}: {self.message}"


@dataclass(frozen=True)
class BoardSnapshot:
    """The board at one moment: valid tasks sorted by id, and every problem found."""

    tasks: list[Task] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    stamp: str = ""

    def by_id(self) -> dict[int, Task]:
        return {t.id: t for t in self.tasks}


@dataclass(frozen=True)
class ClaimResult:
    """claim_next's answer: the claimed task, or None and the reason nothing was claimed."""

    task: Task | None
    reason: str = ""


@dataclass(frozen=True)
class CompleteResult:
    """complete's answer: the completed task and the ids it made claimable."""

    task: Task
    unblocked: list[int] = field(default_factory=list)


def validation_message(exc: ValidationError) -> str:
    """A one-line summary of a pydantic error: 'status: Input should be ...'."""
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "task"
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}")
    more = len(exc.errors()) - 3
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def parse_task(raw: bytes, expected_id: int | None) -> Task:
    """Parse one task file's bytes; ValueError with a one-line reason when it is not a task."""
    try:
        task = Task.model_validate_json(raw)  # fast path; the slow one explains failures
    except ValidationError:
        task = None
    if task is not None:
        if expected_id is not None and task.id != expected_id:
            raise ValueError(f"file holds id {task.id}, its name says {expected_id}")
        return task
    try:
        data = parse_json(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except ValueError as exc:  # nested too deeply for the parser
        raise ValueError(f"not usable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    try:
        task = Task.model_validate(data)
    except ValidationError as exc:
        raise ValueError(validation_message(exc)) from None
    if expected_id is not None and task.id != expected_id:
        raise ValueError(f"file holds id {task.id}, its name says {expected_id}")
    return task
