"""What the task verbs say about odd entries in the state directories (agent_cli.oddfiles):
the board-writing verbs warn about each one they met, `tasks doctor` lists them all.

File-only: with the board in a database (--board), `.tasks/` and `.team/inbox/` are not the
team's, so only this host's own state directories (`.agent-cli/`, `.team/` and its
transcripts) are looked at, and the board verbs watch nothing."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..oddfiles import BoardWatch

BOARD_DIRS = (".tasks", ".team/inbox")  # the team's, on files only


def warns_odd_files(handler: Callable[[argparse.Namespace], int]
                    ) -> Callable[[argparse.Namespace], int]:
    """A verb that writes the board names each odd entry it met in .tasks/ (oddfiles): a
    link or FIFO at .next_id or .stamp is set aside, never silently."""
    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        watch = board_watch(args)
        if watch is None:
            return handler(args)
        try:
            return handler(args)
        finally:
            for line in watch.lines():
                print(f"agent-cli: warning: {line}", file=sys.stderr)

    return run


def board_watch(args: argparse.Namespace) -> BoardWatch | None:
    """What a board verb met in `.tasks/` (oddfiles.BoardWatch), taken before the board is
    touched; None when the board is not the workdir's files."""
    from .workdir import location_of, workdir_of

    if location_of(args).kind != "files":
        return None
    from ..oddfiles import BoardWatch

    return BoardWatch(workdir_of(args))


def odd_state_lines(args: argparse.Namespace, named: str, watch: BoardWatch | None
                    ) -> list[str]:
    """Print every odd entry in the state directories (oddfiles) that `named` (what the
    board's problems and notes said) does not already name, and what this run set aside
    (`watch`, taken before the board was touched); return the lines that count as problems
    (not what earlier runs set aside)."""
    from ..oddfiles import SCOPES, scan
    from .workdir import workdir_of

    odd = watch.lines() if watch is not None else []
    for line in odd:
        print(line)
    met = {e.path for e in watch.before} if watch is not None else set()
    scopes = SCOPES if watch is not None else tuple(
        (rel, deep) for rel, deep in SCOPES if rel not in BOARD_DIRS)
    for entry in scan(workdir_of(args), scopes):
        base = entry.path.split(".unusable-")[0]
        if entry.aside and base not in met:
            print(f"note: {entry.line()}")
        elif not entry.aside and entry.path not in met \
                and entry.path.rsplit("/", 1)[-1] not in named:
            print(entry.line())
            odd.append(entry.line())
    return odd
