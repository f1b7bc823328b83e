"""The offline demo model: `--model demo`, behind the same Model interface as Claude.

`model` (DemoModel: a ScriptedModel whose responder decides each reply, with typing pace),
`lead` and `teammate` (what each side does next), `closing` (the lead's closing text, derived
from the turn's tool results), `intents` (the prompts it understands), `conversation`
(reading the turn so far), `texts` (the scenarios' words).
"""

from .model import DemoModel

__all__ = ["DemoModel"]
