"""-C/--workdir: the option every command accepts, and the directory it names."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import UserError


def workdir_parent() -> argparse.ArgumentParser:
    """-C/--workdir accepted before or after a subcommand."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument(
        "-C",
        "--workdir",
        default=argparse.SUPPRESS,
        metavar="DIR",
        help="where .tasks/ and .team/ live (default: the current directory)",
    )
    return p


def workdir_of(args: argparse.Namespace) -> Path:
    """The -C directory (default: the current one), resolved; UserError if it is none."""
    raw = getattr(args, "workdir", None) or "."
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise UserError(f"workdir {raw} is not a directory")
    return path.resolve()
