"""`.mcp.json` / `--mcp-config FILE` in Claude Code's format, parsed into ServerSpecs.

`{"mcpServers": {"name": {"command", "args", "env", "cwd"} | {"type": "http"|"sse", "url",
"headers"}}}`. `${VAR}` and `${VAR:-default}` are expanded in every string value. A file that
cannot be used is one UserError naming it; a server whose entry is wrong (or needs a variable
that is not set) becomes a ServerSpec with `error` set, so the others still start.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import UserError

PROJECT_FILE = ".mcp.json"
MAX_CONFIG_BYTES = 1_000_000
VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
Origin = Literal["project", "flag"]


class _Stdio(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None


class _Remote(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: Literal["http", "sse"]
    url: str = Field(min_length=1)
    headers: dict[str, str] = Field(default_factory=dict)


@dataclass(frozen=True)
class ServerSpec:
    """One configured server. `error` set: it cannot start, and says why."""

    name: str
    origin: Origin
    source: str  # the file it came from, as shown to the user
    transport: str = "stdio"  # stdio | http | sse
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    fingerprint: str = ""  # hash of the raw entry: trust is for exactly this definition
    error: str = ""
    raw: Any = field(default=None, compare=False, repr=False)  # the entry as written

    def definition(self) -> list[str]:
        """Everything that decides what runs, as written (secrets masked): describe.py."""
        from .describe import definition_lines

        return definition_lines(self.raw)

    @property
    def shown(self) -> str:
        """What the server runs or reaches, for the trust prompt and /mcp."""
        if self.transport == "stdio":
            return " ".join([self.command, *self.args]).strip()
        return f"{self.transport} {self.url}"


class VarMissing(ValueError):
    pass


def expand(text: str, env: Mapping[str, str]) -> str:
    """`${VAR}` / `${VAR:-default}` from `env`; VarMissing for an unset VAR with no default."""

    def one(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        value = env.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise VarMissing(f"${{{name}}} is not set")
            return default
        return value

    return VAR_RE.sub(one, text)


def _expand_all(value: Any, env: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return expand(value, env)
    if isinstance(value, list):
        return [_expand_all(v, env) for v in value]
    if isinstance(value, dict):
        return {k: _expand_all(v, env) for k, v in value.items()}
    return value


def fingerprint(entry: Any) -> str:
    raw = json.dumps(entry, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """A JSON object file read through the state-file helpers (no link followed, no FIFO
    waited on, capped): {} when missing or empty; one UserError naming `what` otherwise."""
    from ..errors import AgentCliError
    from ..fsutil import parse_json, read_state

    try:
        raw = read_state(path, MAX_CONFIG_BYTES)
    except AgentCliError as exc:  # UnusableFile says "is a symlink / FIFO / ..."
        raise UserError(f"{what} {exc}; not a regular file agent-cli may use") from None
    if raw is None or not raw.strip():
        return {}
    try:
        data = parse_json(raw)
    except ValueError as exc:
        raise UserError(f"{what} {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise UserError(f"{what} {path}: the top level must be a JSON object")
    return data


def read_config(path: Path) -> dict[str, Any]:
    """The `mcpServers` object of a config file ({} when the file does not exist)."""
    data = read_json_object(path, "MCP config")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise UserError(f"MCP config {path}: 'mcpServers' must be an object")
    return servers


def parse_servers(
    servers: Mapping[str, Any], origin: Origin, source: str, env: Mapping[str, str]
) -> list[ServerSpec]:
    """ServerSpecs for the entries of one `mcpServers` object, in file order."""
    out: list[ServerSpec] = []
    for name, entry in servers.items():
        out.append(_one(str(name), entry, origin, source, env))
    return out


def _one(name: str, entry: Any, origin: Origin, source: str, env: Mapping[str, str]) -> ServerSpec:
    base = {"name": name, "origin": origin, "source": source, "fingerprint": fingerprint(entry),
            "raw": entry}
    if not NAME_RE.match(name):
        return ServerSpec(**base, error="a server name is 1-40 letters, digits, '_' or '-'")
    if not isinstance(entry, dict):
        return ServerSpec(**base, error="the entry must be an object")
    kind = entry.get("type") or ("stdio" if "command" in entry else "")
    try:
        expanded = _expand_all(entry, env)
        if kind == "stdio":
            s = _Stdio.model_validate({**expanded, "type": "stdio"})
            return ServerSpec(**base, command=s.command, args=tuple(s.args), env=dict(s.env),
                              cwd=s.cwd)
        if kind in ("http", "sse"):
            r = _Remote.model_validate(expanded)
            return ServerSpec(**base, transport=r.type, url=r.url, headers=dict(r.headers))
    except VarMissing as exc:
        return ServerSpec(**base, error=str(exc))
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "entry"
        return ServerSpec(**base, error=f"{loc}: {first['msg']}")
    return ServerSpec(**base, error="needs 'command' (stdio) or 'type': 'http'|'sse' with 'url'")


def load_specs(
    workdir: Path, flag_files: list[str] | tuple[str, ...] = (),
    env: Mapping[str, str] | None = None, problems: list[str] | None = None,
) -> list[ServerSpec]:
    """Every configured server: the project's `.mcp.json`, then each `--mcp-config` file.

    A name defined again by a later file replaces the earlier definition. A project file that
    cannot be used is a line in `problems` (the session starts without it); a `--mcp-config`
    file that cannot be used is a UserError.
    """
    env = os.environ if env is None else env
    by_name: dict[str, ServerSpec] = {}
    project = Path(workdir) / PROJECT_FILE
    try:
        servers = read_config(project)
    except UserError as exc:
        servers = {}
        if problems is not None:
            problems.append(str(exc))
    for spec in parse_servers(servers, "project", PROJECT_FILE, env):
        by_name[spec.name] = spec
    for raw in flag_files:
        path = Path(raw).expanduser()
        if not path.exists():
            raise UserError(f"--mcp-config {raw}: no such file")
        for spec in parse_servers(read_config(path), "flag", str(raw), env):
            by_name[spec.name] = spec
    return list(by_name.values())
