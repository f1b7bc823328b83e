"""The agent engine: one conversation, its turn loop, validity rules, transcript, compaction."""

from .agent import Agent, AgentSettings, PreCall, TurnResult
from .conversation import Conversation, repair, validate
from .identity import Identity

__all__ = [
    "Agent",
    "AgentSettings",
    "Conversation",
    "Identity",
    "PreCall",
    "TurnResult",
    "repair",
    "validate",
]
