"""Permissions: rules, modes, the plan gate hook, the approval broker and the audit log.

policy.py holds the mode and the rules (rules.py parses them, settings.py keeps saved ones);
shell_analysis.py reads a command line (tree-sitter-bash) and shell_verdict.py judges it
against the Bash rules; gate.py decides each tool call; broker.py hands questions to the
human one at a time; audit.py records every decision.
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
