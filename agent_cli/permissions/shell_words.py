"""Decoding one word of a command line the way bash would: quotes, escapes, and where its
value is only decided at run time (`$x`, `${...}`, `$(...)`, `$'...'`, globs, braces, `~`).

`WordReader.word(node)` returns the literal text or None (decided at run time) and records
findings on the line: an expansion bash evaluates (`${!x}`, `${a[i]}`), arithmetic on a
variable (it can run code), anything the grammar may have read differently from bash. The
commands inside `$(...)` are handed back to the statement reader through `substitution`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tree_sitter import Node

from .shell_model import (
    SENSITIVE_PREFIXES,
    SENSITIVE_VARS,
    Finding,
    Line,
    Word,
    descendants,
    shape,
    unescape_double,
    unescape_unquoted,
)

GLOB_CHARS = re.compile(r"[*?\[]")
BRACE_RE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
LONE_DOLLAR_NEXT = (b"", b" ", b"\t", b"\n", b";", b"&", b"|", b")", b"<", b">", b'"')
ARITHMETIC = frozenset(
    "arithmetic_expansion binary_expression unary_expression postfix_expression "
    "ternary_expression parenthesized_expression".split()
)
ARITHMETIC_OK = ARITHMETIC | {"number"}
EVALUATED_VARS = frozenset({"BASH_EXECUTION_STRING", "BASH_COMMAND"})
_NAME = r"([A-Za-z_][A-Za-z0-9_]*|[0-9]|[?#$!*@_-])"
EXPANSION_RE = re.compile(  # ${N} ${#N} ${N[@]} ${N[3]} ${N:-w} ${N#p} ${N/p/r} ${N^^} ...
    r"^\$\{#?" + _NAME + r"(\[(?:[@*]|[0-9]+)\])?(?:(:?[-+?=]|##?|%%?|//?|/#|/%|\^\^?|,,?)"
    r"(?s:.*))?\}$"
)


class WordReader:
    """Words of one line; `substitution(node)` reads the commands of a `$(...)`."""

    def __init__(self, line: Line, substitution: Callable[[Node], None]) -> None:
        self.line = line
        self.substitution = substitution

    def lone_dollar(self, node: Node) -> bool:
        """A `$` bash leaves alone (nothing after it could start an expansion)."""
        nxt = self.line.raw[node.end_byte : node.end_byte + 1]
        quoted = node.parent is not None and node.parent.type == "string"
        if self.b(node) == b"$" and nxt in LONE_DOLLAR_NEXT and (nxt != b'"' or quoted):
            return True  # unquoted `$"..."` is a translated string: `a$""` is `a` to bash
        self.line.unreadable("a `$` the grammar may have read differently from bash")
        return False

    def b(self, node: Node) -> bytes:
        return self.line.raw[node.start_byte : node.end_byte]

    def t(self, node: Node) -> str:
        return self.b(node).decode("utf-8", errors="replace")

    def arithmetic(self, node: Node) -> None:
        """Arithmetic is understood only on literal numbers: bash evaluates a variable's value,
        and any subscript in it, as arithmetic in turn (`a[$(cmd)]` runs cmd)."""
        for sub in [node, *descendants(node)]:
            if sub.is_named and sub.type not in ARITHMETIC_OK:
                self.line.findings.append(
                    Finding(
                        "arithmetic on anything but a literal number can run code the rules "
                        f"cannot see (`{shape(self.t(node))}`)",
                        True,
                    )
                )
                return

    def word(self, node: Node) -> Word:
        t = node.type
        text = self.t(node)
        if node.is_error or node.is_missing or node.has_error:
            self.line.unreadable(f"syntax error near `{shape(text)}`")
            return Word(None)
        if t in ("word", "number"):
            if "$" in text or "`" in text or "(" in text or ")" in text:
                self.line.unreadable(f"`{shape(text)}`")
                return Word(None)
            if GLOB_CHARS.search(text) or BRACE_RE.search(text) or text.startswith("~"):
                return Word(None)
            return Word(unescape_unquoted(text, self.line))
        if t == "raw_string":
            return Word(text[1:-1])
        if t == "string":
            return self.double_quoted(node)
        if t == "concatenation":
            return self.concatenation(node)
        if t in ("command_substitution", "process_substitution"):
            self.substitution(node)
            return Word(None)
        if t == "expansion":
            self.expansion(node)
            return Word(None)
        if t == "simple_expansion":
            self.simple_expansion(node)
        if t in ("simple_expansion", "ansi_c_string", "translated_string", "brace_expression"):
            for child in node.named_children:
                if child.type == "string":
                    self.double_quoted(child)
            return Word(None)
        if t == "arithmetic_expansion":
            self.arithmetic(node)
            for sub in descendants(node):
                if sub.type in ("command_substitution", "process_substitution"):
                    self.substitution(sub)
            return Word(None)
        if t in ("variable_name", "test_operator", "regex", "extglob_pattern"):
            return Word(text if t != "extglob_pattern" else None)
        self.line.unreadable(f"`{t}`")
        return Word(None)

    def double_quoted(self, node: Node) -> Word:
        """A "..." word: literal text between the children is taken from the source bytes,
        so nothing the grammar leaves out (a lone blank) is lost."""
        out: list[str] = []
        dynamic = False
        raw = self.line.raw
        pos = node.start_byte + 1
        inner = node.children[1:-1] if node.child_count >= 2 else []
        for child in inner:
            if child.type == "$":
                self.lone_dollar(child)  # `"$$"` is not two dollars to bash
                continue
            if child.type == "string_content" or not child.is_named:
                continue  # read with the gaps below
            out.append(unescape_double(raw[pos : child.start_byte].decode("utf-8", "replace"),
                                        self.line))
            self.word(child)
            dynamic = True
            pos = child.end_byte
        end = node.end_byte - 1 if node.child_count >= 2 else node.end_byte
        out.append(unescape_double(raw[pos:end].decode("utf-8", "replace"), self.line))
        return Word(None if dynamic else "".join(out))

    def concatenation(self, node: Node) -> Word:
        parts = []
        for c in node.children:
            if c.is_named:
                parts.append(self.word(c))
            elif c.type == "$" and self.lone_dollar(c):
                parts.append(Word("$"))
            else:
                self.line.unreadable(f"`{shape(self.t(c))}`")
        outline = "".join(
            self.t(c) if c.type == "word" else "Q"
            for c in node.named_children
        )
        if BRACE_RE.search(outline) or any(p.text is None for p in parts):
            return Word(None)
        return Word("".join(p.text or "" for p in parts))

    def expansion(self, node: Node) -> None:
        """`${...}`: understood only in the forms that evaluate nothing (EXPANSION_RE)."""
        text = self.t(node)
        m = EXPANSION_RE.match(text)
        name = m.group(1) if m is not None else ""
        assigned = m is not None and m.group(3) is not None and m.group(3).endswith("=")
        sensitive = name in SENSITIVE_VARS or name.startswith(SENSITIVE_PREFIXES)
        if m is None or name in EVALUATED_VARS or (assigned and sensitive):
            self.line.findings.append(
                Finding(f"the expansion `{shape(text)}` is not one the rules understand", True)
            )
        for child in node.named_children:
            if child.type not in ("variable_name", "special_variable_name"):
                self.word(child)

    def simple_expansion(self, node: Node) -> None:
        """`$NAME`: its value is never evaluated, except the variables holding this line."""
        name = self.t(node)[1:]
        if name in EVALUATED_VARS:
            self.line.findings.append(
                Finding(f"`${name}` holds the command line itself", True)
            )
