"""Understanding a shell command line well enough to match permission rules against it.

`parse_command(text)` scans a bash command line the way bash would split it (quotes,
backslashes, operators, substitutions) without running anything, and answers two questions:

- `words`: the words of the line when it is ONE simple command (no `;`, `&&`, `||`, `|`, `&`,
  newlines, redirections, `$...` expansions, backticks, process substitution, subshells or
  braces, comments, leading `X=1` assignments, `env X=1 ...`). Only then may an allow rule
  match. Anything we do not fully understand is not simple: when unsure, the human is asked.
- `parts`: every simple command we can find inside the line, including inside `$(...)`,
  backticks, `<(...)`, subshells and `bash -c '...'`, with leading assignments and common
  wrappers (`sudo`, `env`, `nohup`, `xargs`, `timeout 5` ...) stripped. Deny rules are matched
  against each part, so a deny rule wins inside a compound command. This is best effort:
  the guarantee lies on the allow side.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

ASSIGNMENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
RESERVED = frozenset(
    "! { } [[ ]] if then else elif fi case esac for select while until do done in "
    "function time coproc".split()
)
# Words that run the command that follows them (after their own options).
WRAPPERS = frozenset(
    "sudo doas env nohup exec command builtin nice ionice xargs time timeout stdbuf "
    "setsid chronic unbuffer watch".split()
)
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
MAX_DEPTH = 8


@dataclass(frozen=True)
class ShellCommand:
    """What a command line is made of. `words` is None unless it is one simple command."""

    text: str
    words: tuple[str, ...] | None
    reason: str
    parts: tuple[tuple[str, ...], ...]

    @property
    def simple(self) -> bool:
        return self.words is not None


@dataclass
class _Scan:
    segments: list[list[str]] = field(default_factory=lambda: [[]])
    reasons: list[str] = field(default_factory=list)
    nested: list[str] = field(default_factory=list)
    word: list[str] | None = None
    drop_next_word: bool = False

    def add(self, text: str) -> None:
        if self.word is None:
            self.word = []
        self.word.append(text)

    def end_word(self) -> None:
        if self.word is None:
            return
        text = "".join(self.word)
        self.word = None
        if self.drop_next_word:  # a redirection target is not a word of the command
            self.drop_next_word = False
            return
        self.segments[-1].append(text)

    def break_segment(self, reason: str) -> None:
        self.end_word()
        self.drop_next_word = False
        self.reasons.append(reason)
        if self.segments[-1]:
            self.segments.append([])


def _matching(text: str, i: int, opener: str, closer: str) -> int:
    """Index just past the `closer` matching the `opener` at text[i] (quote-aware)."""
    depth, j, n = 0, i, len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "'":
            end = text.find("'", j + 1)
            j = n if end < 0 else end + 1
            continue
        if c == '"':
            j += 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            continue
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return n


def _backtick_end(text: str, i: int) -> int:
    j, n = i + 1, len(text)
    while j < n and text[j] != "`":
        j += 2 if text[j] == "\\" else 1
    return min(j + 1, n)


def _dollar(text: str, i: int, st: _Scan) -> int:
    """Handle a `$` at text[i]; return the next index. Any expansion makes the line unsimple."""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if nxt == "(":
        end = _matching(text, i + 1, "(", ")")
        st.nested.append(text[i + 2 : end - 1])
        st.reasons.append("command substitution $(...)")
        st.add(text[i:end])
        return end
    if nxt == "{":
        end = _matching(text, i + 1, "{", "}")
        st.reasons.append("parameter expansion ${...}")
        st.add(text[i:end])
        return end
    st.reasons.append("$ expansion")
    st.add("$")
    return i + 1


def _double_quoted(text: str, i: int, st: _Scan) -> int:
    """Scan a "..." string starting at text[i]; return the index after the closing quote."""
    j, n = i + 1, len(text)
    st.add("")
    while j < n:
        c = text[j]
        if c == '"':
            return j + 1
        if c == "\\" and j + 1 < n and text[j + 1] in '$`"\\\n':
            if text[j + 1] == "\n":
                st.reasons.append("newline")
            st.add(text[j + 1])
            j += 2
        elif c == "$":
            j = _dollar(text, j, st)
        elif c == "`":
            end = _backtick_end(text, j)
            st.nested.append(text[j + 1 : end - 1])
            st.reasons.append("backticks")
            st.add(text[j:end])
            j = end
        else:
            if c in "\n\r":
                st.reasons.append("newline")
            st.add(c)
            j += 1
    st.reasons.append("unterminated double quote")
    return n


def _operator(text: str, i: int, st: _Scan) -> int:
    """Handle an unquoted operator character at text[i]; return the next index."""
    c = text[i]
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if c in "<>" and nxt == "(":
        end = _matching(text, i + 1, "(", ")")
        st.nested.append(text[i + 2 : end - 1])
        st.reasons.append("process substitution")
        st.add(text[i:end])
        return end
    if c in "<>":
        # `2>` / `&>`: the digits before the operator belong to the redirection.
        if st.word is not None and "".join(st.word).isdigit():
            st.word = None
        st.end_word()
        st.reasons.append("redirection")
        j = i
        while j < len(text) and text[j] in "<>&|-":
            j += 1
        st.drop_next_word = True
        return j
    if c in "()":
        if c == "(":
            end = _matching(text, i, "(", ")")
            st.nested.append(text[i + 1 : end - 1])
            st.break_segment("subshell")
            return end
        st.break_segment("unbalanced )")
        return i + 1
    if c == "&" and nxt == ">":
        return _operator(text, i + 1, st)
    j = i
    while j < len(text) and text[j] in ";&|":
        j += 1
    st.break_segment(f"operator {text[i:j]}")
    return j


def _scan(text: str) -> _Scan:
    st = _Scan()
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t":
            st.end_word()
            i += 1
        elif c in "\n\r":
            st.break_segment("newline")
            i += 1
        elif c == "\\":
            if i + 1 < n and text[i + 1] in "\n\r":
                st.reasons.append("newline")
            elif i + 1 < n:
                st.add(text[i + 1])
            else:  # bash treats a trailing backslash differently by context: never simple
                st.reasons.append("trailing backslash")
            i += 2
        elif c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                st.reasons.append("unterminated single quote")
                end = n
            st.add(text[i + 1 : end])
            i = end + 1
        elif c == '"':
            i = _double_quoted(text, i, st)
        elif c == "$":
            i = _dollar(text, i, st)
        elif c == "`":
            end = _backtick_end(text, i)
            st.nested.append(text[i + 1 : end - 1])
            st.reasons.append("backticks")
            i = end
        elif c == "#" and st.word is None:
            st.reasons.append("comment")
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c in ";&|<>()":
            i = _operator(text, i, st)
        else:
            if ord(c) < 32 or ord(c) == 127:
                st.reasons.append("control character")
            st.add(c)
            i += 1
    st.end_word()
    return st


def _unwrap(words: list[str]) -> list[str]:
    """Strip leading assignments, reserved words and wrappers (with their options)."""
    i = 0
    while i < len(words):
        w = words[i]
        if ASSIGNMENT_RE.match(w) or w in RESERVED:
            i += 1
        elif os.path.basename(w) in WRAPPERS:
            i += 1
            while i < len(words) and (
                words[i].startswith("-")
                or ASSIGNMENT_RE.match(words[i])
                or words[i].isdigit()
                or re.fullmatch(r"\d+(\.\d+)?[smhd]?", words[i])
            ):
                i += 1
        else:
            break
    return words[i:]


def _parts(text: str, depth: int) -> list[tuple[str, ...]]:
    if depth > MAX_DEPTH:
        return []
    st = _scan(text)
    found: list[tuple[str, ...]] = []
    for seg in st.segments:
        if not seg:
            continue
        found.append(tuple(seg))
        core = _unwrap(seg)
        if core:
            if core != seg:
                found.append(tuple(core))
            if "/" in core[0]:
                found.append((os.path.basename(core[0]), *core[1:]))
            name = os.path.basename(core[0])
            if name in SHELLS and "-c" in core[1:-1]:
                found.extend(_parts(core[core.index("-c", 1) + 1], depth + 1))
            elif name == "eval":
                found.extend(_parts(" ".join(core[1:]), depth + 1))
    for inner in st.nested:
        found.extend(_parts(inner, depth + 1))
    return found


def _why_not_simple(st: _Scan) -> str:
    if st.reasons:
        return st.reasons[0]
    segments = [s for s in st.segments if s]
    if not segments:
        return "empty command"
    if len(segments) > 1:
        return "several commands"
    words = segments[0]
    if ASSIGNMENT_RE.match(words[0]):
        return "leading variable assignment"
    if words[0] in RESERVED:
        return f"shell keyword {words[0]}"
    if os.path.basename(words[0]) == "env" and len(words) > 1:
        return "env runs another command"
    return ""


def parse_command(text: str) -> ShellCommand:
    """Split `text` for rule matching; see the module docstring."""
    st = _scan(text)
    reason = _why_not_simple(st)
    words = None if reason else tuple(st.segments[0])
    parts = list(dict.fromkeys(_parts(text, 0)))
    return ShellCommand(text=text, words=words, reason=reason, parts=tuple(parts))
