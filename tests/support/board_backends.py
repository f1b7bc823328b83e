"""The board's contract tests run against both backends: `board_backend` is parametrized
"files" (a `.tasks/` directory) and "postgresql" (a schema of the test's own on the session's
server). `backend.board(**kw)` opens one more instance on the same board (another instance
stands for another process); `backend.spec` names the board to a racer process, which opens
it with `open_board(spec)`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BACKENDS = ["files", "postgresql"]


def open_board(spec: str, **kw: Any) -> Any:
    """A board from a spec: `files:<dir>` or `postgresql:<schema>|<url>`."""
    kind, _, rest = spec.partition(":")
    if kind == "files":
        from agent_cli.board.store import TaskBoard

        return TaskBoard(Path(rest), **kw)
    from agent_cli.pg.board import PgTaskBoard
    from agent_cli.pg.db import Database

    schema, _, url = rest.partition("|")
    return PgTaskBoard(Database(url, schema), **kw)


class Backend:
    """One board, reachable from this process (`board`) and from others (`spec`)."""

    def __init__(self, name: str, spec: str) -> None:
        self.name = name
        self.spec = spec
        self.dir = Path(spec.split(":", 1)[1]) if name == "files" else None  # .tasks/
        self._opened: list[Any] = []

    @property
    def files(self) -> bool:
        return self.name == "files"

    def board(self, **kw: Any) -> Any:
        board = open_board(self.spec, **kw)
        self._opened.append(board)
        return board

    def close(self) -> None:
        for board in self._opened:
            db = getattr(board, "db", None)
            if db is not None:
                db.close()


@pytest.fixture(params=BACKENDS)
def board_backend(request: pytest.FixtureRequest, workdir: Path) -> Iterator[Backend]:
    """The board under test, once per backend."""
    if request.param == "files":
        backend = Backend("files", f"files:{workdir / '.tasks'}")
    else:
        cluster = request.getfixturevalue("pg_cluster")
        schema = request.getfixturevalue("pg_schema")
        backend = Backend("postgresql", f"postgresql:{schema}|{cluster.url}")
    try:
        yield backend
    finally:
        backend.close()
