"""Permissions: rules, modes, the plan gate hook, the approval broker and the audit log.

policy.py holds the mode and the rules (rules.py parses them, settings.py keeps saved ones);
shell_analysis.py reads a command line (tree-sitter-bash) and shell_verdict.py judges it
against the Bash rules; gate.py decides each tool call; broker.py hands questions to the
human one at a time; audit.py records every decision.

The names below are imported lazily: the settings layers are read before the first prompt,
the shell parser only when a command is judged.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = [
    "ApprovalAnswer",
    "ApprovalBroker",
    "ApprovalRequest",
    "AuditLog",
    "Decision",
    "InvalidRule",
    "Mode",
    "PermissionGate",
    "PermissionPolicy",
    "Rule",
    "RuleEntry",
    "parse_rule",
]

if TYPE_CHECKING:
    from .audit import AuditLog
    from .broker import ApprovalAnswer, ApprovalBroker, ApprovalRequest
    from .gate import Decision, PermissionGate
    from .policy import Mode, PermissionPolicy, RuleEntry
    from .rules import InvalidRule, Rule, parse_rule

_WHERE = {
    "AuditLog": "audit",
    "ApprovalAnswer": "broker",
    "ApprovalBroker": "broker",
    "ApprovalRequest": "broker",
    "Decision": "gate",
    "PermissionGate": "gate",
    "Mode": "policy",
    "PermissionPolicy": "policy",
    "RuleEntry": "policy",
    "InvalidRule": "rules",
    "Rule": "rules",
    "parse_rule": "rules",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(name)
