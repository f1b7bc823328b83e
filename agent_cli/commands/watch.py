"""`agent-cli watch`: the board and team of a workdir, live, for a second terminal."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "watch",
        parents=[parent],
        help="a live view of the board and team (for a second terminal)",
        description="Show the workdir's board (pending, in progress, completed), its team "
        "(state, tokens, cost) and the last board events, updated as any process changes "
        "them. Keys: q quits, t toggles the team pane, m the events pane. With --once, or "
        "when stdout is not a terminal, print one plain frame and exit.",
    )
    p.add_argument("--once", action="store_true", help="print one frame and exit")
    p.add_argument("--width", type=_size, metavar="N",
                   help="frame width for --once (default: the terminal's, else $COLUMNS or 100)")
    p.add_argument("--height", type=_size, metavar="N",
                   help="frame height for --once (default: as tall as the content)")
    p.set_defaults(handler=run, draws_terminal=True)  # colours of its own: cli.draws_terminal


def _size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 10 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"{text!r}: use 10 to 1000")
    return value


def run(args: argparse.Namespace) -> int:
    from ..ui.watch import run_watch
    from .workdir import stores_of, workdir_of

    return run_watch(workdir_of(args), args.once, args.width, args.height, stores_of(args))
