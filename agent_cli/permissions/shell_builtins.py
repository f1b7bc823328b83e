"""The bash builtins that read a word as code, arithmetic or a variable name, on positive terms.

bash evaluates an array subscript in a name as arithmetic (`printf -v 'a[$(rm x)]' y` runs
`rm x`), runs callbacks (`mapfile -C`, `compgen -C/-F`), expands word lists (`compgen -W`)
and evaluates `let`, `declare -i` values and name references. `builtin_problem(words)` says
why a builtin's words are not all understood ("" when they are): every option is one the
table below states, every word read as a name is a plain name (`[A-Za-z_][A-Za-z0-9_]*`,
at most a literal numeric subscript), and nothing is handed to bash to evaluate.
"""

from __future__ import annotations

import re

from .shell_model import SENSITIVE_PREFIXES, SENSITIVE_VARS
from .shell_tables import Table, table, walk

PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[0-9]+\])?$")
NUMBER = re.compile(r"^[+-]?[0-9]+$")
_DECLARE = "a| A| f| F| g| i| l| n| p| r| t| u| x| I|"
TABLES: dict[str, Table] = {
    "printf": table("v|=", prefix=False),
    "read": table("a|= d|= e| i|= n|= N|= p|= r| s| t|= u|=", prefix=False),
    "mapfile": table("C|=! c|= d|= n|= O|= s|= t| u|=", prefix=False),
    "wait": table("f| n| p|=", prefix=False),
    "declare": table(_DECLARE, prefix=False),
    "export": table("f| n| p|", prefix=False),
    "readonly": table("a| A| f| p|", prefix=False),
    "unset": table("f| v| n|", prefix=False),
    "compgen": table("a| b| c| d| e| f| g| j| k| s| u| v| o|= A|= G|= W|=! P|= S|= X|= "
                     "C|=! F|=! D| E| I|", prefix=False),
    "set": table("e| u| x| o|=", prefix=False),
}
TABLES["readarray"] = TABLES["mapfile"]
TABLES["typeset"] = TABLES["local"] = TABLES["declare"]
TABLES["complete"] = TABLES["compopt"] = TABLES["compgen"]
SET_OPTIONS = frozenset("errexit nounset xtrace pipefail noclobber noglob".split())
ALWAYS = {  # builtins whose every use is out of the rules' reach
    "let": "`let` evaluates its words as arithmetic, which can run code",
    "fc": "`fc` runs commands from the history",
    "bind": "`bind` can bind keys to commands",
    "getopts": "",  # checked below
}


def _names(words: list[str], how: str) -> str:
    """Each word read as a variable name is a plain one, and not one that changes what later
    commands run (`read PATH <<< .` would run a repository's own `./ls`)."""
    for w in words:
        name = w.split("=", 1)[0] if "=" in w else w
        if not PLAIN_NAME.match(name):
            return f"`{how} {w}` names a variable bash would evaluate"
        base = name.split("[", 1)[0]
        if base in SENSITIVE_VARS or base.startswith(SENSITIVE_PREFIXES):
            return f"`{how} {w}` sets {base}, which changes what later commands run"
    return ""


def _declare(name: str, opts: list[tuple[str, str]], operands: list[str]) -> str:
    flags = {o for o, _ in opts}
    if "-n" in flags:
        return f"`{name} -n` makes a name reference bash evaluates on use"
    why = _names(operands, name)
    if why:
        return why
    if "-i" in flags:
        for w in operands:  # without a value, later assignments are evaluated
            if not NUMBER.match(w.partition("=")[2]):
                return f"`{name} -i {w}` evaluates its value as arithmetic"
    return ""


def _test(words: list[str]) -> str:
    for flag, operand in zip(words, words[1:], strict=False):
        if flag in ("-v", "-R") and not PLAIN_NAME.match(operand):
            return f"`test {flag} {operand}` evaluates a subscript as arithmetic"
    return ""


def builtin_problem(words: tuple[str, ...]) -> str:
    """Why the builtin call `words` is not understood ("" if it is, or if words[0] is not a
    builtin this module reads)."""
    name, args = words[0], list(words[1:])
    if name in ("test", "["):
        return _test(args)
    if name == "getopts":
        return _names(args[1:2], "getopts")
    if name in ALWAYS:
        return ALWAYS[name]
    tbl = TABLES.get(name)
    if tbl is None:
        return ""
    if name == "set" and args and not args[0].startswith(("-", "+")):
        return ""  # `set a b`: positional parameters
    w = walk([a if not a.startswith("+") else "-" + a[1:] for a in args], tbl, permute=False)
    if w.problem:
        return f"`{name}`: {w.problem}"
    for opt, value in w.runs(tbl):
        return f"`{name} {opt}` hands `{value}` to bash to run"
    values = dict(w.options)
    if name == "set":
        bad = [v for o, v in w.options if o == "-o" and v and v not in SET_OPTIONS]
        return f"`set -o {bad[0]}` changes what later commands mean" if bad else ""
    if name in ("declare", "typeset", "local", "export", "readonly"):
        return _declare(name, w.options, w.operands)
    if name in ("printf", "wait") and "-p" not in values and "-v" not in values:
        return ""
    name_option = {"printf": "-v", "wait": "-p", "read": "-a"}.get(name, "")
    named = [(name_option, values[name_option])] if name_option in values else []
    if name in ("read", "mapfile", "readarray", "unset"):
        named += [("", operand) for operand in w.operands]
    return next((why for o, n in named if (why := _names([n], f"{name} {o}".strip()))), "")
