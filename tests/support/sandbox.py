"""Sandbox test helpers: bubblewrap or a reason, a runtime whose settings enable the sandbox,
and one shell call through the real gate and tool."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_cli.agent.tool_calls import ToolRunner
from agent_cli.models.base import ToolUseBlock
from agent_cli.runtime import Runtime, RuntimeConfig
from agent_cli.sandbox.bwrap import probe
from agent_cli.tools.base import ToolContext, ToolOutput, ToolSet
from agent_cli.tools.workspace import workspace_tools
from agent_cli.tools.workspace_root import Workspace


def need_bwrap() -> None:
    """Skip (saying why) when bubblewrap cannot run here; under CI=true that is a failure:
    .ci/run installs it, so every sandbox test must run there."""
    found = probe()
    if found.ok:
        return
    why = f"sandbox tests need bubblewrap: {found.why}" + (f" ({found.fix})" if found.fix else "")
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(why)
    pytest.skip(why)


def write_settings(workdir: Path, settings: dict[str, Any], layer: str = "local") -> None:
    name = "settings.local.json" if layer == "local" else "settings.json"
    path = workdir / ".agent-cli" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings))


def sandboxed_runtime(workdir: Path, box: dict[str, Any] | None = None,
                      **config: Any) -> Runtime:
    """A runtime whose local settings turn the sandbox on (plus `box` keys)."""
    write_settings(workdir, {"sandbox": {"enabled": True, **(box or {})}})
    return Runtime.open(workdir, RuntimeConfig(**config))


class Shell:
    """One agent's shell calls through the runtime's gate and the sandboxed shell tool."""

    def __init__(self, rt: Runtime, agent: str = "lead", workspace: Path | None = None) -> None:
        self.rt = rt
        root = workspace or rt.workdir
        ws = Workspace(root, root, "" if workspace is None else "in a worktree")
        tools = ToolSet(workspace_tools(rt.sandbox))
        self.runner = ToolRunner(agent, tools, rt.gate, lambda e: None,
                                 lambda: ToolContext(agent, root, workspace=ws))

    def __call__(self, command: str, **extra: Any) -> ToolOutput:
        use = ToolUseBlock(id="t", name="shell", input={"command": command, **extra})
        return self.runner.run_one(use)



def outside_dir() -> Path:
    """A new directory outside the workspace and outside /tmp (inside the sandbox /tmp is a
    private tmpfs, so a write "escaping" into the test's tmp_path would prove nothing)."""
    import tempfile

    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else str(Path.home())
    return Path(tempfile.mkdtemp(prefix="agent-cli-outside-", dir=base))


class RecordingServer:
    """An HTTP server on 127.0.0.1 (a free port) that records every request path."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.seen: list[str] = []
        seen = self.seen

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the standard library's name
                seen.append(self.path)
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"secret-from-loopback")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
