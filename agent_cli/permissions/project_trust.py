"""Settings that came with the repository apply only once the human trusted them.

`.agent-cli/settings.json` is meant to be committed, so a cloned repository can carry
settings that widen what runs without a question: `env` (PATH or BASH_ENV for every
command), `statusLine` (a command), `hooks` (commands that would run at
SessionStart before anyone typed a word), `permissions.allow` rules,
`permissions.additionalDirectories` (where the file tools may read and write) and a widening
`permissions.defaultMode` (acceptEdits, bypassPermissions), and the sandbox settings that
widen (sandbox.config.WIDENING_KEYS: allowWrite, allowedDomains, excludedCommands, turning
it off, auto-allow, leaving it). Those parts are held back until
the human says yes to exactly them: their fingerprint (sha256 of the canonical JSON) is kept
in the host-private `trust.json` (`trustedProjectSettings`; private_state.py: never in a file
a repository can carry), so held parts edited after the answer are asked about again.
Everything else (`permissions.deny` / `ask`, a narrowing mode, `model`, ...) always applies.
The user's own layer and the local one are the human's: never held — unless git tracks that
local file or another user owns it: then it came from elsewhere, its widening parts are held
like the project's. A trust answer in any settings file counts for nothing.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..gitrepo import GitError, GitRepo
from ..private_state import PROJECT_TRUST_KEY
from ..sandbox.config import WIDENING_KEYS

TRUST_KEY = PROJECT_TRUST_KEY
NARROW_MODES = ("default", "plan")


def fingerprint(value: Any) -> str:
    """sha256 of a value as canonical JSON (key order and spacing do not count)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def widening(data: dict[str, Any]) -> dict[str, Any]:
    """The parts of one settings object that are held until trusted ({} when none)."""
    out: dict[str, Any] = {}
    if data.get("hooks"):  # {} runs nothing: nothing to ask about
        out["hooks"] = data["hooks"]
    if data.get("env"):  # PATH, BASH_ENV, LD_PRELOAD, ... decide what a command runs
        out["env"] = data["env"]
    if data.get("statusLine"):  # a command, run at every toolbar refresh
        out["statusLine"] = data["statusLine"]
    perms = data.get("permissions")
    if isinstance(perms, dict):
        if perms.get("allow"):
            out["allow"] = perms["allow"]
        if perms.get("additionalDirectories"):  # the file tools may work there
            out["additionalDirectories"] = perms["additionalDirectories"]
        mode = perms.get("defaultMode")
        if mode is not None and mode not in NARROW_MODES:
            out["defaultMode"] = mode
    box = _sandbox_widening(data.get("sandbox"))
    if box:
        out["sandbox"] = box
    return out


def _sandbox_widening(box: Any) -> dict[str, Any]:
    """The sandbox keys that widen (sandbox.config.WIDENING_KEYS), as "a.b": value.
    Turning the sandbox on, denyRead and the narrowing values always apply."""
    if not isinstance(box, dict):
        return {}
    out: dict[str, Any] = {}
    for path, widens in WIDENING_KEYS.items():
        node: Any = box
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            continue
        if (widens is None and node) or (widens is not None and node == widens):
            out[".".join(path)] = node
    return out


def without_widening(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of a settings object with its held parts removed."""
    out = copy.deepcopy(data)
    out.pop("hooks", None)
    out.pop("env", None)
    out.pop("statusLine", None)
    perms = out.get("permissions")
    if isinstance(perms, dict):
        perms.pop("allow", None)
        perms.pop("additionalDirectories", None)
        if perms.get("defaultMode") not in (None, *NARROW_MODES):
            perms.pop("defaultMode", None)
    box = out.get("sandbox")
    for dotted in _sandbox_widening(box):
        *parents, last = dotted.split(".")
        node = box
        for key in parents:
            node = node[key]
        node.pop(last, None)
    return out


@dataclass
class HeldSettings:
    """What the repository's settings files would widen, held until the human trusts it."""

    path: Path  # the first file with held parts (the project's settings.json as a rule)
    parts: dict[str, dict[str, Any]] = field(default_factory=dict)  # layer name -> widening()
    files: list[str] = field(default_factory=list)  # every file with held parts, as shown

    @property
    def shown(self) -> str:
        """`.claude/settings.json` or `.claude/settings.json and .agent-cli/settings.json`."""
        return " and ".join(self.files) or f"{self.path.parent.name}/{self.path.name}"

    @property
    def allow(self) -> list[str]:
        return [str(r) for p in self.parts.values() for r in (p.get("allow") or [])]

    @property
    def dirs(self) -> list[str]:
        """The held permissions.additionalDirectories entries, as written."""
        out: list[str] = []
        for part in self.parts.values():
            value = part.get("additionalDirectories") or []
            out += [str(d) for d in value] if isinstance(value, list) else [str(value)]
        return out

    @property
    def mode(self) -> str | None:
        modes = [p["defaultMode"] for p in self.parts.values() if "defaultMode" in p]
        return modes[-1] if modes else None

    @property
    def hooks(self) -> list[tuple[str, Any]]:
        return [(name, p["hooks"]) for name, p in self.parts.items() if "hooks" in p]

    @property
    def sandbox(self) -> list[str]:
        """The held sandbox settings as `key=value` (allowedDomains=[...], ...)."""
        return [f"sandbox.{k}={json.dumps(v)}" for p in self.parts.values()
                for k, v in (p.get("sandbox") or {}).items()]

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.parts)

    def summary(self, hooks: int = 0) -> str:
        """`allow Bash(npm test); defaultMode acceptEdits; 2 hooks` (what is held, briefly)."""
        bits = []
        if self.allow:
            bits.append("allow " + ", ".join(self.allow))
        if self.dirs:
            bits.append("additionalDirectories " + ", ".join(self.dirs))
        if self.mode:
            bits.append(f"defaultMode {self.mode}")
        bits += self.sandbox
        env = [str(k) for p in self.parts.values() if isinstance(p.get("env"), dict)
               for k in p["env"]]
        if env:
            bits.append("env " + ", ".join(env))
        lines = [p["statusLine"] for p in self.parts.values() if "statusLine" in p]
        if lines:
            cmd = lines[-1].get("command") if isinstance(lines[-1], dict) else lines[-1]
            bits.append(f"statusLine {cmd}")
        if self.hooks:
            bits.append(f"{hooks} hook{'s' if hooks != 1 else ''}" if hooks else "hooks")
        return "; ".join(bits)


def warning_line(held: HeldSettings, hooks: int = 0) -> str:
    """The one line a run that did not ask (or heard no) shows about held settings."""
    return (f"{held.path.parent.name}/{held.path.name}: not trusted, not applied: "
            f"{held.summary(hooks)} (a terminal session asks at start; "
            f"--trust-project-settings applies them for one run)")


def foreign(path: Path) -> bool:
    """True when `path` is tracked by git or owned by another user (not this user's own)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return st.st_uid != os.geteuid() or committed(path)


def committed(path: Path) -> bool:
    """True when git tracks `path` (a settings.local.json that came with the repository)."""
    if not path.exists():
        return False
    repo = GitRepo.find(path.parent)
    if repo is None:
        return False
    try:
        rel = path.resolve().relative_to(repo.top)
    except ValueError:
        return False
    try:
        proc = repo.run("ls-files", "--error-unmatch", "--", str(rel), check=False)
    except GitError:
        return False
    return proc.returncode == 0
