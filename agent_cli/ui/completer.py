"""SlashCompleter: completes slash commands ("/ta" -> "/tasks", "/" is part of the word) and
their arguments (teammate names, task ids, permission sub-commands and rules, modes, models).

Argument values come from a callable so the completer stays independent of the runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

# (command, argument index, words typed so far) -> candidate values
ArgSource = Callable[[str, int, list[str]], Iterable[str]]


class SlashCompleter(Completer):
    def __init__(self, commands: dict[str, str], args: ArgSource | None = None) -> None:
        self.commands = commands  # "/tasks" -> one-line help
        self.args = args

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or "\n" in text:
            return
        if " " not in text:
            for name in sorted(self.commands):
                if name.startswith(text):
                    yield Completion(
                        name, start_position=-len(text), display_meta=self.commands[name]
                    )
            return
        if self.args is None:
            return
        words = text.split(" ")
        command, typed = words[0], words[1:]
        if command not in self.commands:
            return
        prefix = typed[-1]
        try:
            candidates = list(self.args(command, len(typed) - 1, typed[:-1]))
        except Exception:  # completion must never break typing
            return
        for value in candidates:
            if value.startswith(prefix) and value != prefix:
                yield Completion(value, start_position=-len(prefix))
