"""Host-private state: what only this user's own agent-cli may write, kept where no
repository can carry it.

Landing journals and stages, the worktree records, trust answers (project settings, MCP
servers) and the record of who typed a verify command live in `<git dir>/agent-cli/` for a
workdir at the top of a git repository (`<git dir>/agent-cli/trees/<key>/` for a
subdirectory or a linked worktree): `git clone` never copies the git directory. Outside a
git repository they live under the user's home, `~/.agent-cli/projects/<key>/`, keyed by
the workdir's real path. Every file there is opened without following a link and must be a
regular file owned by this user; anything else counts for nothing, is set aside and is
reported by name (`warnings`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import AgentCliError, StorageError, UnusableFile
from .fsutil import JSON_CAP, open_dir, open_state, parse_json, read_fd, replace_at, set_aside
from .locking import StateLock
from .repo import find_repo_root, git_common_dir

USER_DIR_ENV = "AGENT_CLI_HOME"
SUBDIR = "agent-cli"
# The record of trust answers, with the key names settings files used for them (a settings
# file that still holds one of these keys is not trusted for it: state_migration.py).
TRUST_FILE = "trust.json"
PROJECT_TRUST_KEY = "trustedProjectSettings"
MCP_KEYS = ("enabledMcpjsonServers", "disabledMcpjsonServers", "mcpjsonServerFingerprints")
TRUST_KEYS = (PROJECT_TRUST_KEY, "trustedProjectHooks", *MCP_KEYS)


def user_dir() -> Path:
    """The user's agent-cli directory: $AGENT_CLI_HOME, else ~/.agent-cli ($HOME honoured)."""
    env = os.environ.get(USER_DIR_ENV, "").strip()
    return Path(env).expanduser() if env else Path.home() / ".agent-cli"


def workdir_key(workdir: Path) -> str:
    """`<dir name>-<16 hex of sha256(real path)>`: one directory per workdir."""
    real = os.path.realpath(workdir)
    name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(real))[:40] or "root"
    return f"{name}-{hashlib.sha256(real.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}"


def private_dir(workdir: Path, user: Path | None = None) -> Path:
    """Where the host-private state of `workdir` lives (see the module docstring)."""
    work = Path(os.path.realpath(workdir))
    root = find_repo_root(work)
    common = git_common_dir(root) if root is not None else None
    if root is not None and common is not None:
        base = Path(os.path.realpath(common)) / SUBDIR
        if work == Path(os.path.realpath(root)) and (root / ".git").is_dir():
            return base
        return base / "trees" / workdir_key(work)
    home = Path(os.path.realpath(user if user is not None else user_dir()))
    return home / "projects" / workdir_key(work)


class PrivateStore:
    """The host-private JSON records of one workdir (`read`, `update`) and its directory."""

    def __init__(self, workdir: Path, user: Path | None = None) -> None:
        self.workdir = Path(workdir)
        self.dir = private_dir(self.workdir, user)
        self.warnings: list[str] = []  # what was found and not trusted (once per name)

    def path(self, name: str) -> Path:
        return self.dir / name

    def ensure(self) -> Path:
        """The directory, made (0700) when missing; StorageError when it is not ours."""
        try:
            os.makedirs(self.dir, mode=0o700, exist_ok=True)
            st = os.lstat(self.dir)
        except OSError as exc:
            raise StorageError(f"cannot create {self.dir}: {exc.strerror or exc}") from exc
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            raise StorageError(f"{self.dir} is not a directory of this user's; agent-cli "
                               "keeps its private state there")
        return self.dir

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def read(self, name: str) -> dict[str, Any]:
        """The record `name` ({} when there is none). A file that is not a regular file of
        this user's, or does not parse, counts for nothing: set aside and reported."""
        path = self.path(name)
        try:
            fd = open_state(path, os.O_RDONLY)
        except FileNotFoundError:
            return {}
        except UnusableFile as exc:
            self._reject(path, str(exc))
            return {}
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from exc
        try:
            if os.fstat(fd).st_uid != os.geteuid():
                self._reject(path, "owned by another user")
                return {}
            data = parse_json(read_fd(fd, JSON_CAP, path))
        except (AgentCliError, ValueError, UnicodeDecodeError) as exc:
            self._reject(path, str(exc))
            return {}
        finally:
            os.close(fd)
        return data if isinstance(data, dict) else {}

    def write(self, name: str, data: dict[str, Any]) -> None:
        """Replace record `name` atomically (0600)."""
        self.ensure()
        path = self.path(name)
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        try:
            dfd = open_dir(path.parent)
        except OSError as exc:
            raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from exc
        try:
            replace_at(dfd, path.name, text.encode("utf-8", "surrogateescape"), 0o600)
        except OSError as exc:
            raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from exc
        finally:
            os.close(dfd)

    def update(self, name: str, mutate: Callable[[dict[str, Any]], bool]) -> bool:
        """Locked read-modify-write of record `name`; True when `mutate` changed it."""
        self.ensure()
        with StateLock(self.path(name + ".lock")).held():
            data = self.read(name)
            if not mutate(data):
                return False
            self.write(name, data)
            return True

    def _reject(self, path: Path, why: str) -> None:
        try:
            moved = set_aside(path, "unusable")
        except StorageError:
            moved = None
        where = f"; set aside as {moved.name}" if moved is not None else ""
        self.warn(f"{path}: {why}; not trusted{where}")
