"""One agent's boundary: what its sandboxed commands may write, may not read, may reach.

Writable: the agent's workspace (a teammate's task worktree; the workdir for the lead and
outside git), a private /tmp (a fresh tmpfs per command) and `filesystem.allowWrite`.
Read-only inside every writable place: `.git` (the host commits a teammate's work outside
the sandbox, so nothing in the git directory needs writing: hooks, config and refs stay
out of reach), `.agent-cli/` (settings, every worktree), `.tasks/`, `.team/`, `.claude/`
and `.mcp.json`. Hidden (an empty directory or file in their place): `filesystem.denyRead`,
the paths of `Read(...)` deny rules, the credential stores in CREDENTIAL_STORES and the
local sockets in SOCKETS. Everything else reads as on the host.
"""

from __future__ import annotations

import glob
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .config import SandboxSettings, expand_path

PROTECTED = (".git", ".agent-cli", ".tasks", ".team", ".claude", ".mcp.json")
STATE_DIRS = (".agent-cli", ".tasks", ".team")  # made before a run so none can be planted
# Where common tools keep secrets, relative to the home directory.
CREDENTIAL_STORES = (
    ".ssh", ".aws", ".gnupg", ".azure", ".kube", ".docker/config.json", ".netrc",
    ".git-credentials", ".config/gh", ".config/gcloud", ".config/hub", ".npmrc", ".pypirc",
    ".password-store", ".vault-token", ".terraform.d/credentials.tfrc.json", ".pgpass",
)
# Local sockets a command could use to act outside the boundary (a connect needs no write).
SOCKETS = ("/var/run/docker.sock", "/run/docker.sock", "/run/dbus/system_bus_socket",
           "/run/user/{uid}")
GLOB_CHARS = "*?["


@dataclass
class Boundary:
    """Mounts, lowest first: `visible`, `writable`, `readonly`, `hidden`; `unenforced` lists
    denyRead / Read(...) patterns the sandbox cannot hide (said by /sandbox)."""

    workspace: Path
    visible: list[Path] = field(default_factory=list)  # under /tmp: bound back, read-only
    writable: list[Path] = field(default_factory=list)
    readonly: list[Path] = field(default_factory=list)
    hidden: list[Path] = field(default_factory=list)
    unenforced: list[str] = field(default_factory=list)
    domains: tuple[str, ...] = ()  # allowedDomains (empty: no network at all)

    def describe(self) -> list[str]:
        """Lines for /sandbox: what this agent's commands may write, may not touch."""
        home = Path.home()

        def show(paths: list[Path]) -> str:
            return ", ".join(_tilde(p, home) for p in paths) or "(none)"

        lines = [f"writes: {show(self.writable)}, a private /tmp",
                 f"read-only inside: {show(self.readonly)}",
                 f"hidden: {show(self.hidden)}"]
        if self.unenforced:
            lines.append("not hidden (patterns the sandbox cannot map to paths): "
                         + ", ".join(self.unenforced))
        lines.append("network: " + (", ".join(self.domains) + " (through the proxy)"
                                    if self.domains else "none"))
        return lines


def _tilde(path: Path, home: Path) -> str:
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def build_boundary(
    workspace: Path,
    settings: SandboxSettings,
    workdir: Path,
    deny_read_rules: list[str] = (),  # type: ignore[assignment]
    home: Path | None = None,
) -> Boundary:
    """The boundary of an agent whose workspace is `workspace` (the workdir or its worktree).

    `deny_read_rules`: the specifiers of `Read(...)` deny rules (relative to the workdir,
    `~/` or absolute). Paths that do not exist are left out (nothing to mount); the state
    directories are created first so a command cannot plant them."""
    ws = _real(workspace)
    box = Boundary(ws, domains=settings.allowed_domains)
    box.writable.append(ws)
    main = _real(workdir)
    for path in [main, *_programs_under_tmp()]:  # the private /tmp would hide them
        if Path("/tmp") in path.parents and not any(v == path or v in path.parents
                                                     for v in box.visible):
            box.visible.append(path)
    for text in settings.allow_write:
        path = expand_path(text, workdir)
        if path.exists() and path not in box.writable:
            box.writable.append(path)
    for root in list(box.writable):
        if root == ws:
            for name in STATE_DIRS:
                _make_dir(root / name)
        for name in PROTECTED:
            if os.path.lexists(root / name):
                box.readonly.append(root / name)
    home = home or Path.home()
    wanted = [str(home / c) for c in CREDENTIAL_STORES]
    wanted += [s.format(uid=os.getuid()) for s in SOCKETS]
    agent_sock = os.environ.get("SSH_AUTH_SOCK", "")
    if agent_sock:
        wanted.append(agent_sock)
    for text in [*settings.deny_read, *deny_read_rules]:
        found = _paths_of(text, workdir)
        if found is None:
            box.unenforced.append(text)
        else:
            wanted += found
    for text in wanted:
        path = Path(text)
        if os.path.lexists(path) and path not in box.hidden:
            box.hidden.append(_real(path) if path.is_symlink() else path)
    return box


def _programs_under_tmp() -> list[Path]:
    """Where the commands' programs may live under /tmp: this Python's environment, the
    sandbox's own forwarder, and the PATH entries (a virtualenv made in /tmp). They are bound
    back read-only over the private /tmp, so a command still finds `python` or `pytest`."""
    found = [sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable)),
             os.path.dirname(os.path.realpath(__file__)),  # the proxy's forwarder.py
             *os.environ.get("PATH", "").split(os.pathsep)]
    out: list[Path] = []
    for text in found:
        if text and os.path.isabs(text) and os.path.isdir(text):
            path = _real(Path(text))
            if path not in out:
                out.append(path)
    return sorted(out, key=lambda p: len(p.parts))  # a parent before what it holds


def _make_dir(path: Path) -> None:
    try:
        os.mkdir(path, 0o755)
    except OSError:
        pass  # exists (or cannot be made: then it is not there to plant either)


def _paths_of(spec: str, workdir: Path) -> list[str] | None:
    """The paths a denyRead entry or Read(...) specifier names: `dir/**` and `dir/*` hide
    the directory, a glob in the last part is expanded now; None for a `**` elsewhere."""
    text = spec.strip()
    if text.startswith("//"):
        text = text[1:]
    for tail in ("/**", "/*"):
        if text.endswith(tail):
            text = text[: -len(tail)]
    if not text:
        return None
    head, _, last = text.rpartition("/")
    if any(c in head for c in GLOB_CHARS) or "**" in last:
        return None
    base = str(expand_path(head, workdir)) if head else str(_real(workdir))
    if text.startswith("/") and not head:
        base = "/"
    if any(c in last for c in GLOB_CHARS):
        return sorted(glob.glob(os.path.join(glob.escape(base), last)))[:1000]
    return [os.path.join(base, last)]
