"""The offline demo model: `--model demo`, behind the same Model interface as Claude.

`model` (DemoModel: a ScriptedModel whose responder decides each reply, with typing pace),
`lead` and `teammate` (what each side does next), `intents` (the prompts it understands),
`conversation` (reading the turn so far), `texts` (the scenarios' words).
"""

from .model import DemoModel

__all__ = ["DemoModel"]
