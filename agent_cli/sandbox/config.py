"""The `sandbox` settings, in Claude Code's names, resolved from every settings layer.

`{"sandbox": {"enabled", "autoAllowBashIfSandboxed", "allowUnsandboxedCommands",
"failIfUnavailable", "excludedCommands", "filesystem": {"allowWrite", "denyRead"},
"network": {"allowedDomains", "allowLocalBinding"}}}`. A scalar comes from the highest layer
that sets it (the --sandbox / --no-sandbox flag above all); a list is gathered from every
layer. What a repository's settings may widen without trust is decided in
permissions/project_trust.py (`WIDENING_KEYS` here names the parts it holds).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError

SCALARS = {  # key -> default (Claude Code's defaults)
    "enabled": False,
    "autoAllowBashIfSandboxed": True,
    "allowUnsandboxedCommands": True,
    "failIfUnavailable": False,
}
LISTS = {  # key -> path inside "sandbox"
    "excludedCommands": ("excludedCommands",),
    "allowWrite": ("filesystem", "allowWrite"),
    "denyRead": ("filesystem", "denyRead"),
    "allowedDomains": ("network", "allowedDomains"),
}
# The parts a repository's settings can use to widen what runs or what a command may reach:
# held until the human trusts them (project_trust.py). Value: the setting that widens
# (None: any non-empty list).
WIDENING_KEYS: dict[tuple[str, ...], object] = {
    ("enabled",): False,
    ("autoAllowBashIfSandboxed",): True,
    ("allowUnsandboxedCommands",): True,
    ("failIfUnavailable",): False,
    ("excludedCommands",): None,
    ("filesystem", "allowWrite"): None,
    ("network", "allowedDomains"): None,
    ("network", "allowLocalBinding"): True,
}
USER_OWNED = ("user", "local", "flag")  # layers only the human writes


class SandboxSettingsError(UserError):
    """A `sandbox` setting of the wrong type (the message names the file and the key)."""


@dataclass(frozen=True)
class SandboxSettings:
    """The resolved settings; `enabled_by` names the layer that turned the sandbox on."""

    enabled: bool = False
    auto_allow: bool = True
    allow_unsandboxed: bool = True
    fail_if_unavailable: bool = False
    excluded_commands: tuple[str, ...] = ()
    allow_write: tuple[str, ...] = ()
    deny_read: tuple[str, ...] = ()
    allowed_domains: tuple[str, ...] = ()
    allow_local_binding: bool = False
    enabled_by: str = ""
    sources: dict[str, str] = field(default_factory=dict)  # key -> layer that set it


def _get(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = data
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _check(where: str, key: str, value: Any, kind: type) -> None:
    if kind is list:
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise SandboxSettingsError(f"{where}: 'sandbox.{key}' must be a list of strings")
    elif not isinstance(value, kind):
        raise SandboxSettingsError(f"{where}: 'sandbox.{key}' must be true or false")


def resolve(
    layers: list[tuple[str, str, dict[str, Any]]], flag: bool | None = None
) -> SandboxSettings:
    """`layers`: (layer name, shown path, settings object), lowest precedence first, with
    untrusted widening parts already removed. `flag`: --sandbox (True) / --no-sandbox (False).

    autoAllowBashIfSandboxed defaults to true only when the human turned the sandbox on
    (a flag, the user's or the local layer): a repository that enables it alone narrows
    what runs, it does not make commands run without asking."""
    scalars: dict[str, Any] = {}
    sources: dict[str, str] = {}
    lists: dict[str, list[str]] = {k: [] for k in LISTS}
    local_binding = False
    for name, shown, data in layers:
        box = data.get("sandbox")
        if box is None:
            continue
        if not isinstance(box, dict):
            raise SandboxSettingsError(f"{shown}: 'sandbox' must be an object")
        for key in SCALARS:
            if key in box:
                _check(shown, key, box[key], bool)
                scalars[key], sources[key] = box[key], name
        for key, path in LISTS.items():
            value = _get(box, path)
            if value is not None:
                _check(shown, ".".join(path), value, list)
                lists[key] += [v for v in value if v not in lists[key]]
        binding = _get(box, ("network", "allowLocalBinding"))
        if binding is not None:
            _check(shown, "network.allowLocalBinding", binding, bool)
            local_binding = binding
    if flag is not None:
        scalars["enabled"], sources["enabled"] = flag, "flag"
    enabled_by = sources.get("enabled", "") if scalars.get("enabled") else ""
    auto = scalars.get("autoAllowBashIfSandboxed")
    if auto is None:
        auto = enabled_by in USER_OWNED
    return SandboxSettings(
        enabled=bool(scalars.get("enabled", False)),
        auto_allow=bool(auto),
        allow_unsandboxed=bool(scalars.get("allowUnsandboxedCommands", True)),
        fail_if_unavailable=bool(scalars.get("failIfUnavailable", False)),
        excluded_commands=tuple(lists["excludedCommands"]),
        allow_write=tuple(lists["allowWrite"]),
        deny_read=tuple(lists["denyRead"]),
        allowed_domains=tuple(lists["allowedDomains"]),
        allow_local_binding=local_binding,
        enabled_by=enabled_by,
        sources=sources,
    )


def expand_path(text: str, workdir: Path) -> Path:
    """A settings path: `~` is the home, a relative path is relative to the workdir.
    Symbolic links in it are resolved (a bind mount follows them anyway)."""
    path = Path(os.path.expanduser(text))
    if not path.is_absolute():
        path = Path(workdir) / path
    return Path(os.path.realpath(path))
