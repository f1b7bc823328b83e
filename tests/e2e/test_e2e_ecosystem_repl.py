"""The Claude Code conventions in the real REPL (a pseudo-terminal): /memory lists AGENTS.md
and its import, a UserPromptSubmit hook drops one prompt and lets the next through, a
SessionStart hook's context reaches the lead, SessionEnd runs on Ctrl-D."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.repl_spawn import spawn_repl

pexpect = pytest.importorskip("pexpect")


def test_memory_and_prompt_hooks_in_the_repl(workdir: Path, tmp_path: Path) -> None:
    (workdir / "AGENTS.md").write_text("Use tabs.\n@docs/style.md\n")
    (workdir / "docs").mkdir()
    (workdir / "docs" / "style.md").write_text("Short functions.\n")
    end_log = tmp_path / "end.log"
    guard = "grep -q secret && { echo 'secrets stay out of prompts' >&2; exit 2; }; exit 0"
    hooks = {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": guard}]}],
        "SessionStart": [{"matcher": "startup", "hooks": [
            {"type": "command", "command": "echo 'release freeze until monday'"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": f"cat > {end_log}"}]}],
    }
    (workdir / ".agent-cli").mkdir()
    (workdir / ".agent-cli" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    child = spawn_repl(workdir, {"lead": [{"text": "Hello, noted the freeze."}]}, timeout=20)
    try:
        child.expect("Ctrl-D exits")
        child.expect("has settings that widen what runs")  # came with the repository: asked
        child.expect(r"Trust them\? \[y/N\]")
        child.send("y\r")
        child.send("/memory\r")
        child.expect("AGENTS.md")
        child.expect(r"docs/style\.md")
        child.expect("imported by AGENTS.md")
        child.send("here is my secret token\r")
        child.expect("secrets stay out of prompts")
        child.send("hello\r")
        child.expect("Hello, noted the freeze.")
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    [path] = (workdir / ".team" / "transcripts" / "sessions").glob("*/lead.jsonl")
    transcript = path.read_text()
    assert "release freeze until monday" in transcript  # SessionStart context, first turn
    assert "secret token" not in transcript  # the dropped prompt never reached the lead
    assert json.loads(end_log.read_text())["reason"] == "prompt_input_exit"
