"""Checks on what callers hand the board, before anything touches the disk: one-line errors."""

from __future__ import annotations

import re

from pydantic import ValidationError

from ..errors import UserError
from .models import Verify, validation_message

MAX_SUBJECT = 200


_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_at(text: str) -> int | None:
    """Where a lone surrogate sits (undecodable bytes from argv, a model's bad JSON)."""
    found = _SURROGATE.search(text)
    return found.start() if found else None


def check_id(task_id: object) -> int:
    if isinstance(task_id, bool) or not isinstance(task_id, int) or task_id < 1:
        raise UserError(f"invalid task id {task_id!r}: use a positive integer")
    return task_id


def check_subject(subject: object) -> str:
    if not isinstance(subject, str) or not subject.strip():
        raise UserError("task subject is empty")
    if "\x00" in subject or "\n" in subject.strip():
        raise UserError("task subject must be one line of text")
    if len(subject) > MAX_SUBJECT:
        raise UserError(f"task subject is longer than {MAX_SUBJECT} characters")
    bad = _surrogate_at(subject)
    if bad is not None:
        raise UserError(f"task subject is not valid text: an undecodable character at "
                        f"position {bad + 1} (use UTF-8)")
    return subject.strip()


def check_verify(verify: Verify | dict | None) -> Verify | None:
    if verify is None or isinstance(verify, Verify):
        return verify
    try:
        return Verify.model_validate(verify)
    except ValidationError as exc:
        raise UserError(f"invalid verify: {validation_message(exc)}") from None


def check_text(value: object, what: str) -> str:
    if not isinstance(value, str) or "\x00" in value:
        raise UserError(f"{what} must be text")
    bad = _surrogate_at(value)
    if bad is not None:
        raise UserError(f"{what} is not valid text: an undecodable character at position "
                        f"{bad + 1} (use UTF-8)")
    return value
