"""Permissions: rules, modes, the plan gate hook, the approval broker and the audit log.

policy.py holds the mode and the rules (rules.py parses them, shellsplit.py reads a command
line, settings.py keeps saved ones); gate.py decides each tool call; broker.py hands questions
to the human one at a time; audit.py records every decision.
"""

from .audit import AuditLog
from .broker import ApprovalAnswer, ApprovalBroker, ApprovalRequest
from .gate import Decision, PermissionGate
from .policy import Mode, PermissionPolicy, RuleEntry
from .rules import InvalidRule, Rule, parse_rule

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
