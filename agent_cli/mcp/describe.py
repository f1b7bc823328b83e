"""The whole definition of an MCP server as the trust question shows it: everything that
decides what will run (command, args, env, cwd; url, headers), as the file wrote it.

Values are shown as written, `${VAR}` references as names (never the value from your
environment). A value under a name that looks like a secret (an env key or header such as
`API_KEY`, `GITHUB_TOKEN`, `Authorization`) has its literal text masked, its references and
an auth scheme word (`Bearer`) kept. Environment variables that change what code a program
loads (`NODE_OPTIONS`, `LD_PRELOAD`, `PYTHONPATH`, ...) are marked. Control characters are
shown escaped, never sent to the terminal.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from .config import VAR_RE

MASK = "****"
SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSW|PASSWD|PWD|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH|COOKIE|"
    r"SESSION|SIGNATURE|(^|[_-])KEY$)", re.IGNORECASE)
SCHEME = re.compile(r"^(Bearer|Basic|Token|Digest)\s+", re.IGNORECASE)
LOADS_CODE = frozenset({
    "NODE_OPTIONS", "NODE_PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH",
    "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT", "PERL5OPT", "PERL5LIB", "PERLLIB",
    "RUBYOPT", "RUBYLIB", "BASH_ENV", "ENV", "PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS", "CLASSPATH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_CONFIG_GLOBAL",
    "NPM_CONFIG_PREFIX", "PIP_INDEX_URL", "PROMPT_COMMAND", "ZDOTDIR", "SHELLOPTS",
})
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """Control characters (escape sequences, bidi overrides) shown as `\\x1b`-style text."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def masked(value: str) -> str:
    """A secret's value with its literal text hidden: references and a scheme word kept."""
    out: list[str] = []
    pos = 0
    scheme = SCHEME.match(value)
    if scheme:
        out.append(scheme.group(0))
        pos = scheme.end()
    for m in VAR_RE.finditer(value, pos):
        if m.start() > pos:
            out.append(MASK)
        out.append(m.group(0))
        pos = m.end()
    if pos < len(value):
        out.append(MASK)
    return "".join(out)


def _value(name: str, value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    secret = SECRET_NAME.search(name) and name.upper() not in LOADS_CODE
    return visible(masked(text) if secret else text)


def _pairs(label: str, mapping: Any, loaders: bool) -> list[str]:
    if not isinstance(mapping, Mapping) or not mapping:
        return []
    lines = [f"{label}:"]
    for key, value in mapping.items():
        mark = "   <- changes what code the program loads" if loaders and (
            str(key).upper() in LOADS_CODE or str(key).startswith("DYLD_")) else ""
        lines.append(f"  {visible(str(key))}={_value(str(key), value)}{mark}")
    return lines


def definition_lines(entry: Any) -> list[str]:
    """The lines of one server's definition (as written in its file) for the trust question."""
    if not isinstance(entry, Mapping):
        return [visible(repr(entry))]
    kind = entry.get("type") or ("stdio" if "command" in entry else "?")
    lines: list[str] = []
    if kind == "stdio":
        args = entry.get("args") if isinstance(entry.get("args"), list) else []
        lines.append(f"command: {visible(str(entry.get('command', '')))}")
        if args:
            lines.append("args: " + visible(" ".join(shlex.quote(str(a)) for a in args)))
        cwd = entry.get("cwd")
        lines.append(f"cwd: {visible(str(cwd))}" if cwd else "cwd: the workdir")
        lines += _pairs("env (added to your environment)", entry.get("env"), loaders=True)
    else:
        lines.append(f"type: {visible(str(kind))}")
        lines.append(f"url: {visible(str(entry.get('url', '')))}")
        lines += _pairs("headers", entry.get("headers"), loaders=False)
    known = {"type", "command", "args", "env", "cwd", "url", "headers"}
    for key in entry:
        if key not in known:
            lines.append(f"{visible(str(key))}: {_value(str(key), entry[key])}")
    return lines
