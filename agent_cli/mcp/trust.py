"""Which of a project's `.mcp.json` servers the human trusted, kept in the host-private
`trust.json` (private_state.py: inside the git directory or under the user's home, never in
a file a repository can carry) with Claude Code's key names (`enabledMcpjsonServers` /
`disabledMcpjsonServers`), plus the fingerprint of each answered definition, so a server
whose command changed after the answer is asked about again. The same keys in a
`.agent-cli/settings.local.json` count for nothing (state_migration.py moves a user's own
old answers once)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import StorageError, UserError
from ..private_state import MCP_KEYS, TRUST_FILE, PrivateStore
from .config import ServerSpec

ENABLED, DISABLED, PRINTS = MCP_KEYS


class TrustStore:
    """The project servers' answers for one workdir."""

    def __init__(self, workdir: Path, user: Path | None = None) -> None:
        self.store = PrivateStore(Path(workdir), user)
        self.path = self.store.path(TRUST_FILE)

    def answer(self, spec: ServerSpec) -> bool | None:
        """True trusted, False refused, None never asked (or asked about another definition)."""
        data = self.store.read(TRUST_FILE)
        prints = data.get(PRINTS) if isinstance(data.get(PRINTS), dict) else {}
        if prints.get(spec.name) != spec.fingerprint:
            return None
        if spec.name in _names(data, ENABLED):
            return True
        if spec.name in _names(data, DISABLED):
            return False
        return None

    def save(self, specs: list[ServerSpec], trusted: bool) -> None:
        """Record the human's answer for `specs` (a locked read-modify-write, other keys kept)."""
        if not specs:
            return

        def mutate(data: dict[str, Any]) -> bool:
            keep, drop = (ENABLED, DISABLED) if trusted else (DISABLED, ENABLED)
            names = {s.name for s in specs}
            data[keep] = sorted(set(_names(data, keep)) | names)
            data[drop] = [n for n in _names(data, drop) if n not in names]
            prints = data.get(PRINTS) if isinstance(data.get(PRINTS), dict) else {}
            prints.update({s.name: s.fingerprint for s in specs})
            data[PRINTS] = prints
            return True

        try:
            self.store.update(TRUST_FILE, mutate)
        except StorageError as exc:
            raise UserError(f"answer not saved: {exc}") from None


def _names(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key)
    return [x for x in value if isinstance(x, str)] if isinstance(value, list) else []
