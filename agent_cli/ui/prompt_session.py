"""The REPL's prompt: a prompt_toolkit session (project history, slash completion, bottom
toolbar, style) and its keys (Enter sends, Esc-Enter a new line, Shift-Tab cycles the mode,
Ctrl-C clears or interrupts, Esc interrupts the lead's turn)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import Completer
from prompt_toolkit.filters import Condition, is_searching
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.styles import Style

from ..errors import AgentCliError
from ..fsutil import ensure_dir
from .history import SafeFileHistory

PROMPT = "> "
STYLE = Style.from_dict(
    {
        "bottom-toolbar": "noreverse bg:#262626 #d0d0d0",
        "tb.model": "bold",
        "tb.danger": "bg:ansired #ffffff bold",
        "tb.dim": "#8a8a8a",
        "tb.mail": "ansiyellow bold",
        "spinner": "ansiyellow",
        "stream": "#9e9e9e",
        "prompt": "bold",
    }
)


@dataclass(frozen=True)
class PromptKeys:
    """What the keys act on."""

    busy: Callable[[], bool]  # the lead is running a turn
    interrupt: Callable[[], bool]  # interrupt that turn; False when none was running
    cycle_mode: Callable[[], None]  # Shift-Tab: the next permission mode
    hint: Callable[[str], None]  # a short dim note above the prompt
    show_thinking: Callable[[], None] | None = None  # Ctrl-O: the lead's last thinking


def key_bindings(keys: PromptKeys) -> KeyBindings:
    kb = KeyBindings()
    # While Ctrl-R searches, Enter / Ctrl-C / Esc keep prompt_toolkit's meaning (accept
    # or leave the search); ours would act on the search field instead.
    typing = ~is_searching
    busy = Condition(keys.busy) & typing

    @kb.add("enter", filter=typing)
    def _(event: Any) -> None:
        event.current_buffer.validate_and_handle()

    @kb.add("escape", "enter", filter=typing)
    def _(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    @kb.add("s-tab")
    def _(event: Any) -> None:
        keys.cycle_mode()

    @kb.add("c-c", filter=typing)
    def _(event: Any) -> None:
        buf = event.current_buffer
        if buf.text:
            buf.reset()
        elif not keys.interrupt():
            keys.hint("(Ctrl-D or /quit to exit)")

    @kb.add("escape", filter=busy)
    def _(event: Any) -> None:
        keys.interrupt()

    @kb.add("c-o", filter=typing)
    def _(event: Any) -> None:
        if keys.show_thinking is not None:
            keys.show_thinking()

    return kb


def make_session(history_path: Path, completer: Completer, keys: PromptKeys,
                 toolbar: Callable[[], Any], input: Any = None,
                 output: Any = None) -> PromptSession:
    """The session; a history file that cannot be kept (a read-only project, a link planted
    there) leaves it with a history for this session only."""
    history: Any = InMemoryHistory()
    try:
        ensure_dir(history_path.parent)
        history = SafeFileHistory(history_path)
    except AgentCliError:
        pass
    return PromptSession(
        history=history,
        auto_suggest=AutoSuggestFromHistory(),
        completer=completer,
        complete_while_typing=True,
        multiline=True,
        prompt_continuation="  ",
        key_bindings=key_bindings(keys),
        bottom_toolbar=toolbar,
        refresh_interval=0,  # the Ticker redraws, and only while the spinner turns
        style=STYLE,
        input=input,
        output=output,
    )
