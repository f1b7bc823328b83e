"""An MCP server's listed tools as agent Tools: `mcp__<server>__<tool>`, the server's JSON
schema, permission kind "Mcp" (readOnlyHint tools do not ask), results as tool output
(images and PDFs among them as blocks the model sees)."""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
from typing import Any

from pydantic import RootModel

from ..errors import ToolError
from ..tools.base import Tool, ToolContext, ToolOutput
from ..tools.media import load_media
from ..tools.shell import OUTPUT_CAP, CappedOutput
from .server import ListedTool, McpCallError, McpServer

API_NAME_MAX = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class McpArguments(RootModel[dict[str, Any]]):
    """Whatever object the tool's own JSON schema accepts (checked against that schema)."""


def tool_name(server: str, tool: str) -> str:
    """`mcp__server__tool`, with characters the Messages API refuses replaced by `_`."""
    return f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"[:API_NAME_MAX]


def agent_tools(server: McpServer) -> list[Tool]:
    """One Tool per listed tool of `server` (duplicate names after cleaning are skipped)."""
    seen: set[str] = set()
    out: list[Tool] = []
    for listed in server.tools:
        name = tool_name(server.name, listed.name)
        if name in seen:
            continue
        seen.add(name)
        out.append(_tool(server, listed, name))
    return out


def _tool(server: McpServer, listed: ListedTool, name: str) -> Tool:
    def handler(args: McpArguments, ctx: ToolContext) -> ToolOutput:
        return call(server, listed.name, args.root, ctx.cancel)

    def preview(args: McpArguments, ctx: ToolContext) -> str:
        shown = json.dumps(args.root, ensure_ascii=False, indent=2)
        return f"MCP server {server.name} · tool {listed.name}\n{shown}"

    description = listed.description.strip() or f"{listed.name} (MCP server {server.name})"
    return Tool(
        name=name,
        description=f"[MCP {server.name}] {description}"[:4000],
        input_model=McpArguments,
        handler=handler,
        permission="Mcp",
        rule_target=lambda _args: name,
        preview=preview,
        schema=listed.input_schema,
        read_hint=listed.read_only,
    )


def call(server: McpServer, tool: str, args: dict[str, Any], cancel: threading.Event) -> ToolOutput:
    """Run one call and turn the CallToolResult into a tool result: its text capped like
    shell output, its images and PDFs as blocks the model sees (fitted like read_file's)."""
    try:
        result = server.call(tool, args, cancel)
    except McpCallError as exc:
        return ToolOutput(str(exc), is_error=True)
    text, media = render_result(result, f"{server.name}/{tool}")
    capped = CappedOutput(OUTPUT_CAP)
    capped.feed(text.encode("utf-8"), final=True)
    return ToolOutput(capped.text(), is_error=bool(getattr(result, "is_error", False)),
                      media=media)


def render_result(result: Any, source: str = "mcp") -> tuple[str, list[Any]]:
    """(text, media): text blocks as they are; images and image or PDF resources as blocks
    (with a line saying what each is); audio, other binaries and undecodable data as a
    one-line note."""
    parts: list[str] = []
    media: list[Any] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            parts.append(_media(getattr(block, "data", ""), getattr(block, "mime_type", "?"),
                                f"{source} image {len(media) + 1}", media))
        elif kind == "audio":
            size = len(getattr(block, "data", "") or "") * 3 // 4
            parts.append(f"[audio {getattr(block, 'mime_type', '?')}, {size} bytes: not shown]")
        elif kind == "resource":
            res = block.resource
            text = getattr(res, "text", None)
            blob = getattr(res, "blob", None)
            if text is not None:
                parts.append(text)
            else:
                parts.append(_media(blob or "", getattr(res, "mime_type", None) or "binary",
                                    str(res.uri), media))
        elif kind == "resource_link":
            parts.append(f"[resource link {getattr(block, 'uri', '')}]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False))
    return "\n".join(parts), media


def _media(data: str, mime: str, name: str, media: list[Any]) -> str:
    """The line for one base64 image or file; appends its block to `media` when it is an
    image or PDF the model can take (recognized by content, not by the declared type)."""
    try:
        raw = base64.b64decode(data or "", validate=True)
    except (binascii.Error, ValueError):
        return f"[{mime} from {name}: not valid base64, not shown]"
    try:
        loaded = load_media(raw, name)
    except ToolError as exc:
        return f"[{mime}, {len(raw)} bytes: not shown: {exc}]"
    if loaded is None:
        return f"[{mime}, {len(raw)} bytes: not shown]"
    media.append(loaded.block)
    return loaded.text
