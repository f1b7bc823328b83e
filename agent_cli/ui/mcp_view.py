"""MCP in the terminal: the start-up trust question, the headless start, and `/mcp`."""

from __future__ import annotations

from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

HEADLESS_WAIT_S = 30.0


def trust_question(specs: list[Any]) -> Text:
    """The servers a project's .mcp.json would start, each with its whole definition
    (command, args, cwd, env; url, headers: secrets masked), before the human answers."""
    text = Text()
    text.append(".mcp.json in this workdir wants to start MCP servers:\n", style="yellow")
    for spec in specs:
        text.append(f"  {spec.name}\n", style="bold")
        for line in spec.definition():
            style = "yellow" if "<- changes what code" in line else ""
            text.append(f"    {line}\n", style=style)
    text.append("They run as you, with your rights. Your answer is kept in agent-cli's "
                "private state (in .git/, never in a file the repository carries).", style="dim")
    return text


def start_note(names: list[str]) -> Text | None:
    if not names:
        return None
    return Text(f"MCP: starting {', '.join(names)} in the background (/mcp shows them)",
                style="dim")


def start_headless(runtime: Any, err: TextIO, wait_s: float = HEADLESS_WAIT_S) -> None:
    """Headless: start what may start, say what may not, and wait (bounded) until the
    servers are ready, so the prompt's first request already has their tools."""
    mcp = runtime.mcp
    if mcp is None:
        return
    for problem in mcp.problems:
        print(f"agent-cli: {problem}", file=err)
    mcp.start()
    untrusted = [s.name for s in mcp.servers.values() if s.state == "untrusted"]
    if untrusted:
        print(f"agent-cli: MCP servers from .mcp.json not started (not trusted): "
              f"{', '.join(untrusted)}; trust them in the REPL, or pass --mcp-config .mcp.json",
              file=err)
    for server in mcp.servers.values():
        if server.spec.error:
            print(f"agent-cli: MCP server {server.name}: {server.spec.error}", file=err)
    if not mcp.wait_ready(wait_s):
        late = [s.name for s in mcp.servers.values() if s.state == "starting"]
        print(f"agent-cli: MCP servers still starting after {wait_s:g}s: {', '.join(late)}",
              file=err)
    for server in mcp.servers.values():
        if server.state == "failed" and not server.spec.error:
            print(f"agent-cli: MCP server {server.name}: {server.status}", file=err)


def show(console: Console, runtime: Any) -> None:
    """/mcp: each server's state and where it came from, then its tools."""
    mcp = runtime.mcp
    if mcp is None:
        console.print(Text("No MCP servers: add them to .mcp.json or pass --mcp-config FILE.",
                           style="dim"))
        return
    for problem in mcp.problems:
        console.print(Text(problem, style="red"))
    from ..mcp.tools import tool_name

    for server, status in mcp.describe():
        style = {"ready": "green", "failed": "red", "untrusted": "yellow"}.get(server.state, "")
        line = Text()
        line.append(server.name, style="bold")
        line.append(f"  {status}", style=style)
        line.append(f"  ({server.spec.source}: {server.spec.shown})", style="dim")
        console.print(line)
        for listed in server.tools:
            mark = "  read-only" if listed.read_only else ""
            console.print(Text(f"    {tool_name(server.name, listed.name)}{mark}", style="dim"))
