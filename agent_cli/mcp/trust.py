"""Which of a project's `.mcp.json` servers the human trusted, kept in
`.agent-cli/settings.local.json` (Claude Code's `enabledMcpjsonServers` /
`disabledMcpjsonServers`, plus the fingerprint of each answered definition, so a server whose
command changed after the answer is asked about again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import StorageError, UserError
from ..fsutil import atomic_write_json, ensure_dir
from ..locking import StateLock
from .config import ServerSpec, read_json_object

LOCAL_SETTINGS = Path(".agent-cli") / "settings.local.json"
ENABLED, DISABLED, PRINTS = (
    "enabledMcpjsonServers", "disabledMcpjsonServers", "mcpjsonServerFingerprints")


def _read(path: Path) -> dict[str, Any]:
    return read_json_object(path, "settings")


class TrustStore:
    """The project servers' answers for one workdir."""

    def __init__(self, workdir: Path) -> None:
        self.path = Path(workdir) / LOCAL_SETTINGS

    def answer(self, spec: ServerSpec) -> bool | None:
        """True trusted, False refused, None never asked (or asked about another definition)."""
        data = _read(self.path)
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
        try:
            ensure_dir(self.path.parent)  # .agent-cli itself a link out: refused, named
        except StorageError as exc:
            raise UserError(f"cannot create {self.path.parent}: {exc}") from None
        with StateLock(Path(str(self.path) + ".lock")).held():
            data = _read(self.path)
            keep, drop = (ENABLED, DISABLED) if trusted else (DISABLED, ENABLED)
            names = {s.name for s in specs}
            data[keep] = sorted(set(_names(data, keep)) | names)
            data[drop] = [n for n in _names(data, drop) if n not in names]
            prints = data.get(PRINTS) if isinstance(data.get(PRINTS), dict) else {}
            prints.update({s.name: s.fingerprint for s in specs})
            data[PRINTS] = prints
            atomic_write_json(self.path, data)


def _names(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key)
    return [x for x in value if isinstance(x, str)] if isinstance(value, list) else []
