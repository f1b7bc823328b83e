"""Skipping a command's own options to find the command it runs (`timeout -s KILL 5 rm x`).

`Opts` describes one wrapper's getopt-style options; `skip_options` walks them the way the
wrapper would (clusters like `-sKILL`, `--signal=KILL`, `--sig=KILL` by unique prefix, `--`),
and says where the command starts, which option values are shell code, and whether an
option it does not know stopped it (then nobody can say for sure what runs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ASSIGNMENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Opts:
    arg: str = ""  # short options that take an argument
    flags: str = ""  # short options without one
    attached: str = ""  # short options whose optional argument must be attached (-i{})
    long_arg: frozenset[str] = frozenset()
    long_flags: frozenset[str] = frozenset()
    positionals: int = 0  # words between the options and the command (timeout's duration)
    stop: frozenset[str] = frozenset()  # options after which no command runs (-p PID)
    code: frozenset[str] = frozenset()  # options whose value is shell code (`flock -c`)
    shell: frozenset[str] = frozenset()  # flags that hand the command to a shell (`sudo -s`)
    numeric: bool = False  # -N is an option (nice -10)
    assigns: bool = False  # NAME=value words are skipped (env)
    transparent: bool = False  # an allow rule may match the command it runs


def opts(
    arg: str = "",
    flags: str = "",
    long_arg: str = "",
    long_flags: str = "",
    **kw: object,
) -> Opts:
    """Opts with the long option lists written as space-separated strings."""
    sets = {k: frozenset(str(v).split()) for k, v in kw.items() if k in ("stop", "code", "shell")}
    rest = {k: v for k, v in kw.items() if k not in sets}
    return Opts(
        arg=arg,
        flags=flags,
        long_arg=frozenset(long_arg.split()),
        long_flags=frozenset(long_flags.split()),
        **sets,  # type: ignore[arg-type]
        **rest,  # type: ignore[arg-type]
    )


@dataclass
class Skipped:
    index: int  # where the command starts (== len(words): no command)
    code: list[str] = field(default_factory=list)  # values of code options
    assigned: list[str] = field(default_factory=list)  # NAME of NAME=value words
    seen: list[str] = field(default_factory=list)  # the options met, as written
    unknown: str = ""  # an option this table does not know
    stopped: bool = False  # an option meaning "no command runs"
    to_shell: bool = False  # the command is handed to a shell as one string


def _resolve(name: str, spec: Opts) -> str | None:
    """`name` as getopt_long reads it: exact, or the one long option it is a prefix of."""
    if name in spec.long_arg or name in spec.long_flags:
        return name
    hits = [o for o in (*spec.long_arg, *spec.long_flags) if o.startswith(name)]
    return hits[0] if len(hits) == 1 and name else None


def _long(words: list[str], i: int, spec: Opts, out: Skipped) -> int | None:
    name, eq, value = words[i][2:].partition("=")
    name = _resolve(name, spec) or name
    opt = "--" + name
    if name in spec.long_arg:
        if not eq:
            if i + 1 >= len(words):
                return len(words)
            value = words[i + 1]
            i += 1
        if opt in spec.code:
            out.code.append(value)
    elif name not in spec.long_flags:
        out.unknown = words[i]
        return None
    out.seen.append(opt)
    out.stopped = out.stopped or opt in spec.stop
    out.to_shell = out.to_shell or opt in spec.shell
    return i + 1


def _short(words: list[str], i: int, spec: Opts, out: Skipped) -> int | None:
    cluster = words[i][1:]
    if spec.numeric and cluster.lstrip("-").isdigit():
        return i + 1
    for j, ch in enumerate(cluster):
        opt = "-" + ch
        if ch in spec.arg:
            value = cluster[j + 1 :]
            if not value:
                if i + 1 >= len(words):
                    return len(words)
                value = words[i + 1]
                i += 1
            out.seen.append(opt)
            out.stopped = out.stopped or opt in spec.stop
            if opt in spec.code:
                out.code.append(value)
            return i + 1
        if ch in spec.attached:
            out.seen.append(opt)
            return i + 1
        if ch not in spec.flags:
            out.unknown = words[i]
            return None
        out.seen.append(opt)
        out.stopped = out.stopped or opt in spec.stop
        out.to_shell = out.to_shell or opt in spec.shell
    return i + 1


def skip_options(words: tuple[str, ...] | list[str], spec: Opts, start: int = 1) -> Skipped:
    """Walk `words[start:]` over the options in `spec`; options end at the first other word."""
    words = list(words)
    out = Skipped(start)
    i = start
    while i < len(words):
        w = words[i]
        if w == "--":
            i += 1
            break
        if spec.assigns and ASSIGNMENT_RE.match(w):
            out.assigned.append(w.split("=", 1)[0])
            i += 1
            continue
        if w.startswith("--") and len(w) > 2:
            nxt = _long(words, i, spec, out)
        elif w.startswith("-") and len(w) > 1:
            nxt = _short(words, i, spec, out)
        else:
            break
        if nxt is None:
            out.index = i
            return out
        i = nxt
    out.index = min(i + spec.positionals, len(words))
    if i + spec.positionals > len(words):
        out.index = len(words)
    return out
