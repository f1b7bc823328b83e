"""What a tool is, and how one call is validated and run.

A Tool has a name, a description, a pydantic input model (its JSON schema is what the model
sees), flags for the permission gate, and a handler `(args, ctx) -> str | ToolOutput`.
Refusals are ToolError (-> an is_error result); invalid input and handler exceptions are
turned into is_error results too, so nothing a model does kills its agent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from ..errors import ToolError
from ..models.base import DocumentBlock, ImageBlock, TextBlock, ToolSpec
from .read_guard import ReadGuard
from .workspace_root import Workspace

# Rule families of Claude Code's permission syntax; None = not subject to human approval.
PermissionKind = Literal["Bash", "Write", "Edit", "Read", "Mcp"]


@dataclass
class ToolOutput:
    """A handler's answer. `end_turn` asks the turn loop to stop after this round (idle).
    `media`: images and PDFs the model sees after `content` (read_file on a picture, an MCP
    screenshot); `content` stays the text every hook, event and log uses."""

    content: str
    is_error: bool = False
    end_turn: bool = False
    media: list[ImageBlock | DocumentBlock] = field(default_factory=list)

    def result_content(self) -> str | list[TextBlock | ImageBlock | DocumentBlock]:
        """The tool_result content: the text alone, or the text then the media parts."""
        text = self.content if self.content.strip() else "(no output)"
        if not self.media:
            return text
        return [TextBlock(text=text), *self.media]


@dataclass
class ToolContext:
    """Who is calling and what it may touch: its name and role, the directory (and
    Workspace) its file and shell tools work in, its cancel event, and why the call happens.
    Never the runtime: a tool that acts on the board or the team gets those bound to its
    handler when the tool set is built (team/board_tools.py, team/team_tools.py)."""

    agent: str
    workdir: Path
    role: str = ""
    cancel: threading.Event = field(default_factory=threading.Event)
    # Why the call happens, for approval prompts ("task #3 verify"); set by the caller.
    purpose: str = ""
    # Where its file tools and shell work (tools/workspace_root.py); not given: the main
    # tree, Workspace.main(workdir). `workdir` is its root (the gate's path rules use it).
    workspace: Workspace | None = None
    # What the file tools must not read (tools/read_guard.py): set by the permission gate
    # for the call it decided; None = no Read rule applies.
    read_guard: ReadGuard | None = None

    def __post_init__(self) -> None:
        if self.workspace is None:
            self.workspace = Workspace.main(self.workdir)


Handler = Callable[[Any, ToolContext], "str | ToolOutput"]


@dataclass
class Tool:
    """One tool.

    read_only: never asks, never refused by the plan gate (read_file, list_tasks...), unless
        a Read rule says so: a read_only tool with permission "Read" (read_file, grep, glob)
        meets the Read deny and ask rules on the path `rule_target(args)` names.
    permission: the rule family ("Bash", "Write", "Edit", "Read", "Mcp") when a rule or a
        human may decide; `rule_target(args)` gives the rule's specifier (command, path).
    plan_exempt: effectful but allowed while a plan is pending (send_message, submit_plan).
    preview: optional `(args, ctx) -> str` shown at an approval (the command, a diff).
    schema: a JSON schema given as is (an MCP server's) instead of the input model's; raw
        input is checked against it first.
    read_hint: the tool says it only reads (MCP readOnlyHint): deny rules still apply, but
        it never asks and the plan gate lets it run.
    """

    name: str
    description: str
    input_model: type[BaseModel]
    handler: Handler
    read_only: bool = False
    permission: PermissionKind | None = None
    rule_target: Callable[[Any], str] | None = None
    plan_exempt: bool = False
    preview: Callable[[Any, ToolContext], str] | None = None
    schema: dict[str, Any] | None = None
    read_hint: bool = False

    def spec(self) -> ToolSpec:
        if self.schema is not None:
            return ToolSpec(name=self.name, description=self.description, input_schema=self.schema)
        schema = self.input_model.model_json_schema()
        schema.pop("title", None)
        return ToolSpec(name=self.name, description=self.description, input_schema=schema)

    def parse(self, raw: dict[str, Any]) -> BaseModel:
        """Validate raw model input; raise ToolError with a readable message."""
        if self.schema is not None:
            check_schema(self.name, self.schema, raw)
        try:
            return self.input_model.model_validate(raw)
        except ValidationError as exc:
            parts = []
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"]) or "input"
                parts.append(f"{loc}: {err['msg']}")
            raise ToolError(f"invalid input for {self.name}: " + "; ".join(parts)) from exc

    def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        """Run the handler (after the gate said yes); never raises."""
        try:
            out = self.handler(args, ctx)
        except ToolError as exc:
            return ToolOutput(str(exc), is_error=True)
        except Exception as exc:  # a handler bug must not kill the agent
            return ToolOutput(f"{self.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        if isinstance(out, ToolOutput):
            return out
        return ToolOutput(str(out))


def check_schema(name: str, schema: dict[str, Any], raw: Any) -> None:
    """ToolError naming each place where `raw` breaks a JSON schema (at most five)."""
    import jsonschema

    try:
        validator = jsonschema.validators.validator_for(schema)(schema)
        errors = sorted(validator.iter_errors(raw), key=lambda e: list(e.path))[:5]
    except (jsonschema.SchemaError, TypeError, ValueError, RecursionError):
        return  # a schema we cannot apply: the server checks its own input
    if errors:
        parts = [f"{'.'.join(str(p) for p in e.path) or 'input'}: {e.message}" for e in errors]
        raise ToolError(f"invalid input for {name}: " + "; ".join(parts))


class ToolSet:
    """An ordered, name-indexed collection of tools an agent may call.

    `extra` (optional) is asked for more tools at every lookup: tools that arrive during the
    session (an MCP server that became ready) join from the next request on. A fixed tool
    wins over an extra one of the same name.
    """

    def __init__(
        self, tools: list[Tool] | None = None, extra: Callable[[], list[Tool]] | None = None
    ) -> None:
        self._tools: dict[str, Tool] = {}
        self._extra = extra
        for t in tools or []:
            self.add(t)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"duplicate tool {tool.name}")
        self._tools[tool.name] = tool

    def _all(self) -> dict[str, Tool]:
        if self._extra is None:
            return self._tools
        merged = dict(self._tools)
        for t in self._extra():
            merged.setdefault(t.name, t)
        return merged

    def get(self, name: str) -> Tool | None:
        return self._all().get(name)

    def names(self) -> list[str]:
        return list(self._all())

    def specs(self) -> list[ToolSpec]:
        return [t.spec() for t in self._all().values()]

    def __iter__(self):
        return iter(self._all().values())

    def __len__(self) -> int:
        return len(self._all())
