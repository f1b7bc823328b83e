"""Hooks that came with the repository run only once the human trusted them.

`.agent-cli/settings.json` is meant to be committed, so a cloned repository can carry hooks:
commands that would run at SessionStart before anyone typed a word. Like a project's
`.mcp.json` servers, they are held back until the human says yes to exactly that `hooks`
object: its fingerprint (sha256 of the canonical JSON) is kept in the local layer
(`trustedProjectHooks`), so hooks edited after the answer are asked about again. The user's
own layer (`~/.agent-cli/settings.json`) and the local one are the human's: never held —
unless git tracks that local file: then it came with the repository too, its hooks are held
like the project's and a trust answer in it counts for nothing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..gitrepo import GitError, GitRepo
from .layers import SettingsLayers

TRUST_KEY = "trustedProjectHooks"


def fingerprint(hooks: Any) -> str:
    """sha256 of a `hooks` value as canonical JSON (key order and spacing do not count)."""
    text = json.dumps(hooks, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ProjectHookTrust:
    """The human's answer about the project layer's hooks, for one workdir."""

    def __init__(self, layers: SettingsLayers) -> None:
        self.layers = layers

    def trusted(self, hooks: Any) -> bool:
        """True when the local layer trusts exactly this `hooks` value."""
        if self.layers.load_local().get(TRUST_KEY) != fingerprint(hooks):
            return False
        return not committed(self.layers.local.path)

    def save(self, hooks: Any) -> None:
        """Trust this `hooks` value (a locked read-modify-write of the local layer)."""
        want = fingerprint(hooks)

        def mutate(data: dict[str, Any]) -> bool:
            if data.get(TRUST_KEY) == want:
                return False
            data[TRUST_KEY] = want
            return True

        self.layers.update_local(mutate)


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
