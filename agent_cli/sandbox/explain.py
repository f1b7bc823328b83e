"""One line a model can act on when a sandboxed command hit the boundary.

Programs report a refused write as "Read-only file system" (EROFS: everything outside the
writable places is mounted read-only), a hidden path as missing, and a network without
the proxy as a failed name lookup. `explain` reads the command's output for those and
names the first path (or host) concerned; "" when nothing in it points at the boundary.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .boundary import Boundary

# "touch: cannot touch '/etc/x': Read-only file system", "bash: line 1: /etc/x: Read-only
# file system", "OSError: [Errno 30] Read-only file system: '/etc/x'"
_EROFS = [
    re.compile(r"[`'‘\"]([^`'’\"\n]+)[`'’\"]: Read-only file system"),
    re.compile(r"Read-only file system: [`'‘\"]([^`'’\"\n]+)[`'’\"]"),
    re.compile(r"(?:^|\s)(\S+): Read-only file system", re.MULTILINE),
]
_ENOENT = [
    re.compile(r"[`'‘\"]([^`'’\"\n]+)[`'’\"]: No such file or directory"),
    re.compile(r"No such file or directory: [`'‘\"]([^`'’\"\n]+)[`'’\"]"),
    re.compile(r"(?:^|\s)(\S+): No such file or directory", re.MULTILINE),
]
_NO_NET = re.compile(
    r"Could not resolve host|Temporary failure in name resolution|Name or service not known|"
    r"Network is unreachable|getaddrinfo failed|nodename nor servname", re.IGNORECASE)


def _paths(patterns: list[re.Pattern[str]], output: str) -> list[str]:
    found = []
    for pattern in patterns:
        found += [m.group(1) for m in pattern.finditer(output)]
    return found


def _under(path: Path, roots: list[Path]) -> Path | None:
    for root in roots:
        if path == root or root in path.parents:
            return root
    return None


def explain(output: str, box: Boundary, cwd: Path, blocked: list[str] | None = None) -> str:
    """The boundary failure in `output`, in one line; `blocked`: hosts the proxy refused."""
    if blocked:
        return (f"network access refused by the sandbox: {blocked[0]} is not in "
                "sandbox.network.allowedDomains")
    for shown in _paths(_EROFS, output):
        path = Path(os.path.normpath(cwd / shown))
        inside = _under(path, box.readonly)
        if inside is not None:
            return (f"write refused: {shown} is read-only in the sandbox "
                    f"({inside.name}/ is protected)")
        return f"write outside the sandbox refused: {shown}"
    for shown in _paths(_ENOENT, output):
        path = Path(os.path.normpath(cwd / os.path.expanduser(shown)))
        if _under(path, box.hidden) is not None:
            return (f"read refused: {shown} is hidden by the sandbox "
                    "(denyRead or a credential store)")
    if _NO_NET.search(output):
        if box.domains:
            return ("network access refused by the sandbox: only "
                    f"{', '.join(box.domains)} are reachable, through HTTP(S)_PROXY")
        return "network access refused by the sandbox: it has no network (sandbox.network)"
    return ""
