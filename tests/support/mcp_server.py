"""A real MCP server for the tests, written with the SDK's server API.

`python mcp_server.py` serves over stdio; `python mcp_server.py http|sse` binds 127.0.0.1 on a
free port, prints `PORT <n>` once it listens, and serves Streamable HTTP at /mcp (or SSE at
/sse).
Tools: echo (readOnlyHint), touch (writes a file: effectful), crash (the process exits in the
middle of the call), slow (sleeps), picture (an image block).
"""

from __future__ import annotations

import base64
import os
import socket
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.types import ImageContent, ToolAnnotations

app = MCPServer("fixture")


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@app.tool()
def touch(path: str, content: str = "made by mcp") -> str:
    """Write `content` to `path` (relative to the server's cwd)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(content)
    return f"wrote {path}"


@app.tool()
def crash() -> str:
    """The server process dies in the middle of this call."""
    print("fixture server: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def slow(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "slept"


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def picture() -> list:
    """An image (a 2400x1200 PNG screenshot) and a caption."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (2400, 1200), (30, 120, 200)).save(buf, "PNG")
    data = base64.b64encode(buf.getvalue()).decode()
    return [ImageContent(type="image", data=data, mime_type="image/png"), "a caption"]


def serve_http(kind: str) -> None:
    import anyio
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    web = app.sse_app() if kind == "sse" else app.streamable_http_app()
    config = uvicorn.Config(web, log_level="warning")
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    if os.environ.get("FIXTURE_PIDFILE"):
        with open(os.environ["FIXTURE_PIDFILE"], "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()}\n")
    if sys.argv[1:] in (["http"], ["sse"]):
        serve_http(sys.argv[1])
    else:
        app.run()
