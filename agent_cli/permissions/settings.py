"""`.agent-cli/settings.json`: loading and saving the permission rules a project keeps.

Format: `{"permissions": {"allow": ["Bash(git status)"], "deny": ["Bash(rm *)"], "ask": [...]}}`;
other keys are preserved untouched on save. The same functions serve every settings layer
(user, project, local: see layers.py). A file that is not valid JSON, or whose permissions are not
lists of strings, is reported by name (UserError) and never overwritten. Saving is a locked
read-modify-write with an atomic replace, so two processes adding rules do not lose one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import StorageError, UnusableFile, UserError
from ..fsutil import atomic_write_json, ensure_dir, parse_json, read_state
from ..locking import StateLock

SETTINGS_RELPATH = Path(".agent-cli") / "settings.json"
EFFECTS = ("allow", "deny", "ask")
MAX_SETTINGS_BYTES = 1_000_000


class SettingsError(UserError):
    """settings.json cannot be read or has the wrong shape (the message names the file)."""


def default_settings_path(workdir: Path) -> Path:
    return Path(workdir) / SETTINGS_RELPATH


def _read(path: Path) -> dict[str, Any]:
    try:
        data = read_state(path)
        if data is None:
            return {}
        raw = data.decode("utf-8")
    except UnusableFile as exc:  # a link, FIFO, directory or over its cap: never read
        raise SettingsError(f"{exc}; agent-cli does not use it (move it away)") from exc
    except (StorageError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read {path}: {exc}") from exc
    if not raw.strip():
        return {}
    try:
        data = parse_json(raw)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix or remove it"
        ) from exc
    except ValueError as exc:  # nested too deeply
        raise SettingsError(f"{path} is not usable JSON ({exc}); fix or remove it") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: the top level must be a JSON object")
    perms = data.get("permissions", {})
    if not isinstance(perms, dict):
        raise SettingsError(f"{path}: 'permissions' must be an object")
    for effect in EFFECTS:
        items = perms.get(effect, [])
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            raise SettingsError(f"{path}: 'permissions.{effect}' must be a list of strings")
    return data


def load_settings(path: Path) -> dict[str, Any]:
    """The whole settings object in `path` ({} when the file does not exist); SettingsError
    naming the file when it is not valid JSON or its permissions have the wrong shape."""
    return _read(Path(path))


def load_rules(path: Path) -> dict[str, list[str]]:
    """The allow, deny and ask rule texts in `path` ({} entries when the file does not exist)."""
    perms = _read(Path(path)).get("permissions", {})
    return {effect: list(perms.get(effect, [])) for effect in EFFECTS}


def _lock(path: Path) -> StateLock:
    return StateLock(Path(str(path) + ".lock"))


def update_rule(path: Path, rule: str, effect: str, present: bool) -> bool:
    """Add (present=True) or remove a rule in the file; return True if the file changed."""
    path = Path(path)
    if not present and not os.path.lexists(path):
        return False
    try:
        ensure_dir(path.parent)
    except StorageError as exc:
        raise SettingsError(f"cannot create {path.parent}: {exc}") from exc
    with _lock(path).held():
        data = _read(path)
        perms = data.setdefault("permissions", {})
        items: list[str] = perms.setdefault(effect, [])
        if present == (rule in items):
            return False
        if present:
            items.append(rule)
        else:
            perms[effect] = [x for x in items if x != rule]
        atomic_write_json(path, data)
        return True


def update_settings(path: Path, mutate: Callable[[dict[str, Any]], bool]) -> bool:
    """Locked read-modify-write of the whole settings object in `path`.

    `mutate(data)` changes `data` in place and returns True when it changed something; only
    then is the file replaced (atomically). A corrupt file is never overwritten.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SettingsError(f"cannot create {path.parent}: {exc.strerror or exc}") from exc
    with _lock(path).held():
        data = _read(path)
        if not mutate(data):
            return False
        atomic_write_json(path, data)
        return True
