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
        for sub in descendants(node):
            if sub.type in ("variable_name", "simple_expansion", "expansion", "word"):
                self.line.findings.append(
                    Finding(
                        "arithmetic on a variable can run code the rules cannot see "
                        f"(`{shape(self.t(node))}`)",
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
        text = self.t(node)
        if "!" in text[:3] or "[" in text or re.match(r"\$\{#?\w+:[^-=+?]", text):
            self.line.findings.append(
                Finding(f"the expansion `{shape(text)}` is evaluated by bash", True)
            )
        for child in node.named_children:
            if child.type not in ("variable_name", "special_variable_name"):
                self.word(child)

