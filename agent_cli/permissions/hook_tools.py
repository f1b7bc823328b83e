"""How a tool call looks to a hook: Claude Code's tool names and input fields, so a hook
script written for Claude Code reads `.tool_name`, `.tool_input.file_path`,
`.tool_response.filePath` and finds what it expects.

| ours | Claude Code | tool_input |
| --- | --- | --- |
| shell | Bash | command, description, timeout (ms) |
| write_file | Write | file_path (absolute), content |
| edit_file | Edit | file_path, old_string, new_string, replace_all |
| read_file | Read | file_path, offset, limit |
| glob | Glob | pattern, path (absolute) |
| grep | Grep | pattern, path (absolute), glob |

MCP tools are already `mcp__server__tool`; the board, team and skill tools keep their own
names and inputs. `from_claude_input` maps a PreToolUse hook's `updatedInput` back to our
field names (an absolute path inside the root becomes root-relative again); the caller then
validates it and sends it through the permission gate like any call.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

# Our tool names and Claude Code's.
CLAUDE_NAMES = {"shell": "Bash", "write_file": "Write", "edit_file": "Edit",
                "read_file": "Read", "glob": "Glob", "grep": "Grep"}
OURS = {cc: ours for ours, cc in CLAUDE_NAMES.items()}
PATH_FIELD = {"write_file": "file_path", "edit_file": "file_path", "read_file": "file_path",
              "glob": "path", "grep": "path"}


def claude_name(name: str) -> str:
    """The name a hook sees (and a matcher may use) for our tool `name`."""
    return CLAUDE_NAMES.get(name, name)


def _absolute(root: Path, raw: Any) -> Any:
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        return raw
    text = os.path.expanduser(raw) if raw.startswith("~") else raw
    return os.path.normpath(os.path.join(root, text))


def _relative(root: Path, raw: Any) -> Any:
    """An absolute path inside `root` as root-relative; anything else as given (the tool's
    confinement then refuses a path outside)."""
    if not isinstance(raw, str) or not os.path.isabs(raw):
        return raw
    base = os.path.normpath(root)
    path = os.path.normpath(raw)
    if path == base:
        return "."
    if path.startswith(base.rstrip(os.sep) + os.sep):
        return os.path.relpath(path, base)
    return raw


def claude_input(name: str, raw: dict[str, Any], root: Path) -> dict[str, Any]:
    """Our call's input in Claude Code's field names (other tools: as given)."""
    if name == "shell":
        out = {"command": raw.get("command"), "description": raw.get("description", "")}
        if raw.get("timeout_s") is not None:
            out["timeout"] = int(float(raw["timeout_s"]) * 1000)
        extra = {k: v for k, v in raw.items() if k not in ("command", "timeout_s")}
        return {**out, **extra}
    field = PATH_FIELD.get(name)
    if field is None:
        return dict(raw)
    out = {k: v for k, v in raw.items() if k != "path"}
    default = "." if name in ("glob", "grep") else None
    path = raw.get("path", default)
    if path is not None:
        out = {field: _absolute(root, path), **out}
    return out


def from_claude_input(name: str, updated: dict[str, Any], current: dict[str, Any],
                      root: Path) -> dict[str, Any]:
    """A hook's `updatedInput` (Claude Code's names, over the call's current input in those
    names) as our tool's input."""
    merged = {**claude_input(name, current, root), **updated}
    if name == "shell":
        out = {k: v for k, v in merged.items() if k not in ("timeout", "description")}
        timeout = merged.get("timeout")
        if isinstance(timeout, int | float) and not isinstance(timeout, bool):
            out["timeout_s"] = timeout / 1000
        elif "timeout_s" in current:
            out["timeout_s"] = current["timeout_s"]
        return out
    field = PATH_FIELD.get(name)
    if field is None:
        return merged
    out = {k: v for k, v in merged.items() if k != field}
    if field in merged:
        out["path"] = _relative(root, merged[field])
    return out


def claude_response(name: str, cc_input: dict[str, Any], content: str,
                    is_error: bool) -> dict[str, Any]:
    """`tool_response` for PostToolUse: our result text (`content`, also `message`) and
    `is_error`, plus the fields Claude Code's own result carries for that tool (`filePath`,
    `success`, `stdout`, ...; Write's `content` is the file's, as in Claude Code)."""
    out: dict[str, Any] = {"content": content, "message": content, "is_error": is_error}
    path = cc_input.get("file_path")
    if name == "shell":
        out.update(stdout=content, stderr="", interrupted=False, isImage=False)
    elif name == "write_file":
        out.update(filePath=path, content=cc_input.get("content"), success=not is_error,
                   type="update" if content.startswith("Overwrote") else "create")
    elif name == "edit_file":
        out.update(filePath=path, oldString=cc_input.get("old_string"),
                   newString=cc_input.get("new_string"),
                   replaceAll=bool(cc_input.get("replace_all")), success=not is_error)
    elif name == "read_file":
        out.update(type="text", file={"filePath": path, "content": content})
    elif name in ("glob", "grep"):
        out.update(success=not is_error)
    return out
