"""Settings layers, lowest to highest precedence: user < project < local (< command-line flags).

- user:    `~/.agent-cli/settings.json` (`$AGENT_CLI_HOME/settings.json` when that is set)
- project: `<workdir>/.agent-cli/settings.json`, meant to be committed
- local:   `<workdir>/.agent-cli/settings.local.json`, this machine only; the first write
  adds it to the repository's `.git/info/exclude` when the workdir is in a git repo. One
  that git tracks, or that another user owns, came from elsewhere: its widening parts are
  held like the project's.

Claude Code's files are read as layers of the same kinds, each just below agent-cli's file
of its kind (so where both set a scalar, agent-cli's own file wins): `~/.claude/settings.json`
(`$CLAUDE_CONFIG_DIR`) is a user layer, `.claude/settings.json` a project layer and
`.claude/settings.local.json` a local one, trusted exactly as their `.agent-cli/` peers. The
order: claude-user < user < claude-project < project < claude-local < local. Writes never go
to a `.claude/` file.

Lists (permission rules, hooks) are gathered from every layer, each item remembering its
layer; a scalar (`model`, `permissions.defaultMode`) is taken from the highest layer that
sets it. Writes ("allow always", `/permissions save`) go to the local layer. The human's
trust answer is not a setting: it lives in the host-private `trust.json`
(private_state.py), where no repository can put one.

`loaded()` is what every reader sees (the policy, the hooks, `session_defaults`): the parts
of the project layer (and of a settings.local.json git tracks) that widen what runs without
asking are left out until the human trusted them (project_trust.py); `held()` says what.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..claude.paths import claude_home
from ..private_state import TRUST_FILE, PrivateStore, user_dir
from ..repo import add_to_exclude, find_repo_root
from ..sandbox.config import SandboxSettings
from ..sandbox.config import resolve as resolve_sandbox
from .project_trust import (
    TRUST_KEY,
    HeldSettings,
    foreign,
    widening,
    without_widening,
)
from .settings import load_settings, update_rule, update_settings

OLD_TRUST_KEY = "trustedProjectHooks"  # the hooks-only answer this one replaced
LAYER_NAMES = ("user", "project", "local")
CLAUDE_NAMES = {"claude-user": "user", "claude-project": "project", "claude-local": "local"}
LOCAL_NAME = "settings.local.json"
EXCLUDE_PATTERNS = ("**/.agent-cli/settings.local.json", "**/.agent-cli/*.lock")
__all__ = ["LAYER_NAMES", "Layer", "SettingsLayers", "session_defaults", "user_dir"]


@dataclass(frozen=True)
class Layer:
    """One settings file: its layer name, path and how /permissions shows it."""

    name: str  # user | project | local | claude-user | claude-project | claude-local
    path: Path
    shown: str  # "~/.agent-cli/settings.json", ".agent-cli/settings.local.json"

    @property
    def source(self) -> str:
        return f"settings: {self.shown}"

    @property
    def kind(self) -> str:
        """user | project | local: whose file it is, for precedence and trust."""
        return CLAUDE_NAMES.get(self.name, self.name)

    @property
    def claude(self) -> bool:
        return self.name in CLAUDE_NAMES


class SettingsLayers:
    """The three settings files of one workdir (read on demand; never cached)."""

    def __init__(self, workdir: Path, user: Path | None = None,
                 trust_project: bool = False) -> None:
        self.workdir = Path(workdir)
        self.trust_project = trust_project  # --trust-project-settings: this run only
        self._foreign: dict[Path, bool] = {}
        udir = Path(user) if user is not None else user_dir()
        self.private = PrivateStore(self.workdir, udir)
        cdir = claude_home()
        cc = self.workdir / ".claude"
        self.layers = (
            Layer("claude-user", cdir / "settings.json", _shown(cdir / "settings.json")),
            Layer("user", udir / "settings.json", _shown(udir / "settings.json")),
            Layer("claude-project", cc / "settings.json", ".claude/settings.json"),
            Layer("project", self.workdir / ".agent-cli" / "settings.json",
                  ".agent-cli/settings.json"),
            Layer("claude-local", cc / LOCAL_NAME, f".claude/{LOCAL_NAME}"),
            Layer("local", self.workdir / ".agent-cli" / LOCAL_NAME, f".agent-cli/{LOCAL_NAME}"),
        )

    def layer(self, name: str) -> Layer:
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise KeyError(name)

    @property
    def local(self) -> Layer:
        return self.layer("local")

    def load(self, name: str) -> dict[str, Any]:
        """One layer's settings object ({} when its file does not exist)."""
        return _load(self.layer(name))

    def raw_loaded(self) -> list[tuple[Layer, dict[str, Any]]]:
        """Every layer with its settings as written, lowest precedence first."""
        return [(layer, _load(layer)) for layer in self.layers]

    def loaded(self) -> list[tuple[Layer, dict[str, Any]]]:
        """Every layer with its effective settings, lowest precedence first: the repository's
        widening parts are left out until trusted."""
        raw = self.raw_loaded()
        held = self._held(raw)
        if held is None or self.trust_project or self._trusted(held, raw):
            return raw
        return [(layer, without_widening(data) if layer.name in held.parts else data)
                for layer, data in raw]

    def held(self) -> HeldSettings | None:
        """What is held from the repository's settings now (None: nothing, or trusted)."""
        raw = self.raw_loaded()
        held = self._held(raw)
        if held is None or self.trust_project or self._trusted(held, raw):
            return None
        return held

    def held_parts(self) -> HeldSettings | None:
        """The repository's widening parts whether trusted or not (what a yes trusts)."""
        return self._held(self.raw_loaded())

    def trust(self, held: HeldSettings) -> None:
        """Save the human's yes to exactly these held parts (host-private trust.json)."""
        want = held.fingerprint

        def mutate(data: dict[str, Any]) -> bool:
            if data.get(TRUST_KEY) == want:
                return False
            data[TRUST_KEY] = want
            return True

        self.private.update(TRUST_FILE, mutate)

    def sandbox_settings(self, flag: bool | None = None) -> SandboxSettings:
        """The `sandbox` settings from the effective layers (a tracked settings.local.json
        counts as the repository's); `flag`: --sandbox / --no-sandbox."""
        rows = [("project" if layer.kind == "local" and self._committed(layer) else layer.kind,
                 str(layer.path), data) for layer, data in self.loaded()]
        return resolve_sandbox(rows, flag)

    def env(self, loaded: list[tuple[Layer, dict[str, Any]]] | None = None
            ) -> tuple[dict[str, str], list[str]]:
        """The `env` every agent command gets (higher layers override a name), and one note
        per file whose `env` is not an object of strings (those entries are not applied)."""
        out: dict[str, str] = {}
        notes: list[str] = []
        for layer, data in loaded if loaded is not None else self.loaded():
            env = data.get("env")
            if env is None:
                continue
            if not isinstance(env, dict):
                notes.append(f"{layer.shown}: 'env' is not an object; not applied")
                continue
            bad = [str(k) for k, v in env.items() if not isinstance(v, (str, int, float))
                   or isinstance(v, bool) or not str(k) or "=" in str(k) or "\x00" in str(v)]
            if bad:
                notes.append(f"{layer.shown}: env {', '.join(bad)}: not a name=string; "
                             "not applied")
            out.update({str(k): str(v) for k, v in env.items() if str(k) not in bad})
        return out, notes

    def mcp_answers(self) -> tuple[bool, set[str], set[str]]:
        """(enableAllProjectMcpServers, enabledMcpjsonServers, disabledMcpjsonServers) from the
        human's own files only: the user layers and an untracked local one (a repository's
        settings never trust its own servers). A name in both lists counts as disabled."""
        enable_all, enabled, disabled = False, set(), set()
        for layer, data in self.raw_loaded():
            if layer.kind == "project" or self.foreign_local(layer):
                continue
            if isinstance(data.get("enableAllProjectMcpServers"), bool):
                enable_all = data["enableAllProjectMcpServers"]
            for key, names in (("enabledMcpjsonServers", enabled),
                               ("disabledMcpjsonServers", disabled)):
                value = data.get(key)
                if isinstance(value, list):
                    names.update(str(v) for v in value if isinstance(v, str))
        return enable_all, enabled - disabled, disabled

    def _committed(self, layer: Layer | None = None) -> bool:
        """Whether a settings.local.json came from elsewhere: git tracks it or another user
        owns it (asked once per file and session: two git calls)."""
        path = (layer or self.local).path
        if path not in self._foreign:
            self._foreign[path] = foreign(path)
        return self._foreign[path]

    def foreign_local(self, layer: Layer) -> bool:
        """A local-kind layer that counts as the repository's (tracked, or another user's)."""
        return layer.kind == "local" and self._committed(layer)

    def _held(self, raw: list[tuple[Layer, dict[str, Any]]]) -> HeldSettings | None:
        held: HeldSettings | None = None
        for layer, data in raw:
            if layer.kind == "user":
                continue
            parts = widening(data)
            if not parts or (layer.kind == "local" and not self._committed(layer)):
                continue
            held = held or HeldSettings(layer.path)
            held.parts[layer.name] = parts
            held.files.append(layer.shown)
        return held

    def _trusted(self, held: HeldSettings, raw: list[tuple[Layer, dict[str, Any]]]) -> bool:
        """The human's yes to exactly these parts is in the private record (a trust key in
        any settings file counts for nothing)."""
        return self.private.read(TRUST_FILE).get(TRUST_KEY) == held.fingerprint

    def value(self, *keys: str, loaded: list[tuple[Layer, dict[str, Any]]] | None = None
              ) -> tuple[Any, Layer | None]:
        """A scalar from the highest layer that sets it: ("acceptEdits", local) or (None, None).
        `loaded`: the layers already read (one read for several values)."""
        found: tuple[Any, Layer | None] = (None, None)
        for layer, data in loaded if loaded is not None else self.loaded():
            node: Any = data
            for key in keys:
                node = node.get(key) if isinstance(node, dict) else None
            if node is not None:
                found = (node, layer)
        return found

    # ----- the local layer -------------------------------------------------------------
    def load_local(self) -> dict[str, Any]:
        """The local layer's settings object (other parts keep their own keys in it)."""
        return self.load("local")

    def update_local(self, mutate: Callable[[dict[str, Any]], bool]) -> bool:
        """Locked read-modify-write of the local layer; see settings.update_settings."""
        changed = update_settings(self.local.path, mutate)
        if changed:
            self.keep_local_out_of_git()
        return changed

    def save_rule(self, rule: str, effect: str) -> bool:
        """Add a rule to the local layer; True when the file changed."""
        changed = update_rule(self.local.path, rule, effect, present=True)
        if changed:
            self.keep_local_out_of_git()
        return changed

    def remove_rule(self, rule: str, effect: str) -> bool:
        """Remove a rule from the files in the workdir (local and project); True if any had it."""
        removed = False
        for name in ("local", "project"):
            removed = update_rule(self.layer(name).path, rule, effect, present=False) or removed
        return removed

    def keep_local_out_of_git(self) -> bool:
        """Add settings.local.json (and the settings lock files) to .git/info/exclude when
        the workdir is in a repository."""
        root = find_repo_root(self.workdir)
        if root is None:
            return False
        return any([add_to_exclude(root, pattern) for pattern in EXCLUDE_PATTERNS])


def _load(layer: Layer) -> dict[str, Any]:
    """The user's own file may be a symlink (dotfiles); files in the workdir never are."""
    path = layer.path.resolve() if layer.kind == "user" else layer.path
    return load_settings(path)


def _shown(path: Path) -> str:
    """`~/.claude/settings.json` when under the home directory, else the path."""
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def session_defaults(workdir: Path, trust_project: bool = False,
                     user: Path | None = None) -> dict[str, Any]:
    """`model`, `permissions.defaultMode` and `thinking` (raw, with the file it came from in
    `thinking_from`) from the highest settings layer that sets them (command-line flags
    override them); SettingsError naming the file for a bad value in agent-cli's own files.
    A value of a `.claude/` file agent-cli cannot use (`"model": "opusplan"`, a mode it lacks,
    bypassPermissions) is passed over: claude_keys.settings_notes names it at start."""
    from .policy import MODES
    from .settings import SettingsError

    layers = SettingsLayers(workdir, user, trust_project)
    loaded = layers.loaded()
    out: dict[str, Any] = {}
    thinking, layer = layers.value("thinking", loaded=loaded)
    if thinking is not None:
        out["thinking"] = thinking
        out["thinking_from"] = str(layer.path) if layer else "settings"
    model, layer = layers.value("model", loaded=usable(loaded, "model"))
    if model is not None:
        if not isinstance(model, str) or not model.strip():
            raise SettingsError(f"{layer.path if layer else ''}: 'model' must be a model name")
        out["model"] = claude_model(model) if layer is not None and layer.claude else model.strip()
    mode, layer = layers.value("permissions", "defaultMode", loaded=usable(loaded, "mode"))
    if mode is not None:
        if mode not in MODES:
            raise SettingsError(
                f"{layer.path if layer else ''}: permissions.defaultMode {mode!r} is not one of "
                f"{', '.join(MODES)}"
            )
        out["permission_mode"] = mode
    return out


def claude_model(raw: Any) -> str | None:
    """The model a `.claude/` file's `model` names (`opus` -> a Claude name), or None."""
    from ..claude.names import model_name

    return model_name(raw)[0] if isinstance(raw, str) else None


def claude_mode_usable(mode: Any) -> bool:
    """A `.claude/` file's defaultMode agent-cli applies (bypassPermissions needs the flag)."""
    return mode in ("default", "acceptEdits", "plan")


def usable(loaded: list[tuple[Layer, dict[str, Any]]], what: str
            ) -> list[tuple[Layer, dict[str, Any]]]:
    """The layers with a `.claude/` file's unusable model / defaultMode left out."""
    out = []
    for layer, data in loaded:
        if layer.claude and what == "model" and "model" in data \
                and claude_model(data["model"]) is None:
            data = {k: v for k, v in data.items() if k != "model"}
        perms = data.get("permissions")
        if layer.claude and what == "mode" and isinstance(perms, dict) \
                and "defaultMode" in perms and not claude_mode_usable(perms["defaultMode"]):
            data = {**data, "permissions": {k: v for k, v in perms.items()
                                            if k != "defaultMode"}}
        out.append((layer, data))
    return out
