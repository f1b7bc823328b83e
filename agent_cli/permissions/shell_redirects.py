"""Redirections in a bash command line: which files a redirection opens (the harmless ones,
fd duplication and /dev/null, are left out), what a here-document or here-string feeds the
command, and the code inside a here-document's substitutions. Used by shell_syntax's reader.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tree_sitter import Node

from .shell_model import HARMLESS_TARGETS, Line, Word, descendants, shape
from .shell_words import WordReader


def add_shown(redirects: list[str], shown: str) -> None:
    """Keep a redirection's text unless it was harmless ('')."""
    if shown:
        redirects.append(shown)


class RedirectReader:
    """Reads the redirection nodes of one line for the statement reader that owns it.

    `statement` reads a statement inside a redirection (`cat <<EOF | sh`); `scratch` gives a
    throw-away reader (with `.words`) for text read only to know what it says.
    """

    def __init__(self, line: Line, words: WordReader, statement: Callable[[Node], None],
                 scratch: Callable[[], Any]) -> None:
        self.line = line
        self._words = words
        self._statement = statement
        self._scratch = scratch

    def b(self, node: Node) -> bytes:
        return self.line.raw[node.start_byte : node.end_byte]

    def t(self, node: Node) -> str:
        return self.b(node).decode("utf-8", errors="replace")

    def redirect(self, node: Node) -> str:
        """'' for a harmless redirection (fd duplication, /dev/null, a here-document into a
        command), else how it reads: "> out.txt"."""
        t = node.type
        if t == "heredoc_redirect":
            for child in node.named_children:
                if child.type == "heredoc_body":
                    self._heredoc_body(node, child)
                elif child.type not in ("heredoc_start", "heredoc_end"):
                    # `cat <<EOF | sh`: the rest of the pipeline reads what cat passes on
                    start = len(self.line.commands)
                    self._statement(child)
                    body = self.literal_input(node)
                    if body is not None and len(self.line.commands) > start:
                        self.line.stdin_code[start] = body
            return ""
        if t == "herestring_redirect":
            for child in node.named_children:
                self._words.word(child)
            return ""
        op = ""
        target: Word | None = None
        for child in node.children:
            if child.type == "file_descriptor":
                continue
            if not child.is_named:
                op += child.type
            else:
                target = self._words.word(child)
        if target is None:
            return ""
        if op in (">&", "<&", ">&-", "<&-") and target.text is not None and (
            target.text.isdigit() or target.text == "-"
        ):
            return ""
        if target.text in HARMLESS_TARGETS and op in (">", ">>", "&>", "&>>", ">|", ">&"):
            return ""
        shown = self.t(node)
        return shape(shown)

    def _heredoc_body(self, redirect: Node, body: Node) -> None:
        quoted = any(
            c.type == "heredoc_start" and self.b(c)[:1] in (b"'", b'"', b"\\")
            for c in redirect.named_children
        ) or any(c.type == "heredoc_start" and b"\\" in self.b(c) for c in redirect.named_children)
        if quoted:
            return
        text = self.b(body)
        seen = [d for d in descendants(body) if self.b(d)[:2] in (b"$(", b"`")]
        if text.count(b"`") > 2 * sum(self.b(d)[:1] == b"`" for d in seen) or text.count(
            b"$("
        ) > sum(self.b(d)[:2] == b"$(" for d in seen):
            self.line.unreadable("a substitution in a here-document")
        for child in body.named_children:
            if child.type != "heredoc_content":
                self._words.word(child)

    def literal_input(self, node: Node) -> str | None:
        """The literal text a here-string or here-document feeds to the command."""
        if node.type == "herestring_redirect":
            scratch = self._scratch()
            words = [scratch.words.word(c) for c in node.named_children]
            if words and all(w.text is not None for w in words):
                return " ".join(w.text for w in words if w.text is not None)
            return None
        if node.type == "heredoc_redirect":
            for child in node.named_children:
                if child.type == "heredoc_body" and not child.named_children:
                    return self.t(child)
                if child.type == "heredoc_body":
                    parts = child.named_children
                    if all(p.type == "heredoc_content" for p in parts):
                        return self.t(child)
        return None
