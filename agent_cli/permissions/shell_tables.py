"""Option tables: what each option of a tool means, read the way the tool itself reads them.

A table is written as space-separated tokens `[S|]LONG[KIND][!]`: `S` a short letter, `LONG`
the long name (empty for a short-only option), KIND `=` (takes a value: attached or the next
word), `?` (an optional value, attached only: `-O'x'`, `--porcelain=v2`) or nothing (a flag);
`!` marks an option whose value is a command the tool runs. `walk` reads a command's words
against a table: long options resolved by unique prefix when the tool does (`--exe` is
`--exec` to git), `--no-NAME` negations, short clusters split (`-qx CMD` is `-q -x CMD`),
attached values seen. Anything the table does not state -- an unknown or ambiguous option --
is reported, never guessed: the caller treats the line as not understood.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r"^(?:(.)\|)?([A-Za-z0-9][\w-]*)?([=?]?)(!?)$")


@dataclass(frozen=True)
class Table:
    shorts: dict[str, str]  # letter -> kind ("", "=", "?")
    longs: dict[str, str]  # name -> kind
    runs: frozenset[str]  # options (as "-x" / "--exec") whose value is a command
    prefix: bool = True  # long options may be abbreviated (getopt_long, git parse-options)
    negate: bool = False  # `--no-NAME` negates NAME (git)
    digits: bool = False  # `-5` is an option (git log -5, grep -3)
    long_alias: dict[str, str] = field(default_factory=dict)  # short letter -> long name


def table(spec: str, *, prefix: bool = True, negate: bool = False, digits: bool = False) -> Table:
    """Build a Table from its written form (see the module docstring)."""
    shorts: dict[str, str] = {}
    longs: dict[str, str] = {}
    runs: set[str] = set()
    alias: dict[str, str] = {}
    for token in spec.split():
        m = _TOKEN.match(token)
        if m is None:
            raise ValueError(f"bad option token {token!r}")
        short, long_, kind, code = m.groups()
        if short:
            shorts[short] = kind
            if code:
                runs.add("-" + short)
        if long_:
            longs[long_] = kind
            if code:
                runs.add("--" + long_)
            if short:
                alias[short] = long_
    return Table(shorts, longs, frozenset(runs), prefix, negate, digits, alias)


@dataclass
class Walk:
    """What `walk` read: the options met (canonical "-x"/"--name", with their values), where
    the operands start, and the first thing the table does not state ("" if none)."""

    options: list[tuple[str, str]] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)
    problem: str = ""

    def runs(self, tbl: Table) -> list[tuple[str, str]]:
        """The options met whose value is a command the tool runs."""
        return [(o, v) for o, v in self.options if o in tbl.runs]


def resolve_long(tbl: Table, name: str) -> tuple[str, str] | None:
    """(canonical long name, kind) for `name` as the tool reads it, or None (unknown or
    ambiguous). A negated name (`no-exec`) resolves to itself as a flag."""
    candidates = dict(tbl.longs)
    if tbl.negate:
        for long_ in tbl.longs:
            candidates.setdefault("no-" + long_, "")
    if name in candidates:
        return name, candidates[name]
    if not tbl.prefix:
        return None
    hits = [c for c in candidates if c.startswith(name)]
    if len(hits) != 1:
        return None
    return hits[0], candidates[hits[0]]


def _long(tbl: Table, words: list[str], i: int, out: Walk) -> int:
    name, eq, value = words[i][2:].partition("=")
    found = resolve_long(tbl, name)
    if found is None:
        out.problem = f"`{words[i]}` is not an option the rules know"
        return len(words)
    canon, kind = found
    if kind == "=" and not eq:
        if i + 1 >= len(words):
            out.options.append(("--" + canon, ""))
            return len(words)
        value = words[i + 1]
        i += 1
    out.options.append(("--" + canon, value))
    return i + 1


def _short(tbl: Table, words: list[str], i: int, out: Walk) -> int:
    cluster = words[i][1:]
    if tbl.digits and cluster.isdigit():
        out.options.append(("-" + cluster, ""))
        return i + 1
    for j, ch in enumerate(cluster):
        kind = tbl.shorts.get(ch)
        if kind is None:
            out.problem = f"`-{ch}` in `{words[i]}` is not an option the rules know"
            return len(words)
        rest = cluster[j + 1 :]
        if kind == "?":
            out.options.append(("-" + ch, rest))
            return i + 1
        if kind == "=":
            if not rest:
                if i + 1 >= len(words):
                    out.options.append(("-" + ch, ""))
                    return len(words)
                rest = words[i + 1]
                i += 1
            out.options.append(("-" + ch, rest))
            return i + 1
        out.options.append(("-" + ch, ""))
    return i + 1


def walk(words: list[str] | tuple[str, ...], tbl: Table, *, permute: bool = True) -> Walk:
    """Read `words` (the arguments, without the command name) against `tbl`. `permute`:
    options may follow operands (GNU tools, git); otherwise the first operand ends them."""
    words = list(words)
    out = Walk()
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--":
            out.operands += words[i + 1 :]
            break
        if w.startswith("--"):
            i = _long(tbl, words, i, out)
        elif w.startswith("-") and len(w) > 1:
            i = _short(tbl, words, i, out)
        else:
            out.operands.append(w)
            i += 1
            if not permute:
                out.operands += words[i:]
                break
        if out.problem:
            break
    return out
