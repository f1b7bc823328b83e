"""A call the permission check cannot read -- a shell line nested too deeply for the
analyzer, a path with a lone surrogate -- is denied, and that decision is in the audit log
like every other one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import run_scripted

DEEP = "(" * 100_000 + "rm -rf victim" + ")" * 100_000


def audited(workdir: Path) -> list[dict]:
    lines = (workdir / ".team" / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


BYPASS = ("--permission-mode", "bypassPermissions", "--dangerously-skip-permissions")


@pytest.mark.parametrize("flags", [(), ("--allow", "Bash", "--deny", "Bash(rm *)"),
                                   (*BYPASS, "--deny", "Bash(rm *)")],
                         ids=["default", "allow-Bash-deny-rm", "bypass-deny-rm"])
def test_a_shell_line_too_deep_to_analyze_is_denied_and_audited(workdir: Path, flags) -> None:
    (workdir / "victim").write_text("keep\n")
    script = {"lead": [{"text": "", "tool_calls": [{"name": "shell",
                                                     "input": {"command": DEEP}}]},
                       {"text": "done"}]}
    proc = run_scripted(workdir, script, "go", *flags)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert (workdir / "victim").read_text() == "keep\n"
    [entry] = [e for e in audited(workdir) if e["tool"] == "shell"]
    assert entry["decision"] == "deny"


def test_a_path_that_cannot_be_encoded_is_denied_and_audited(workdir: Path) -> None:
    script = {"lead": [{"text": "", "tool_calls": [{"name": "write_file", "input": {
        "path": "f\ud800.txt", "content": "x"}}]}, {"text": "done"}]}
    proc = run_scripted(workdir, script, "go", *BYPASS)
    assert "Traceback" not in proc.stderr, proc.stderr
    [entry] = [e for e in audited(workdir) if e["tool"] == "write_file"]
    assert (entry["decision"], entry["source"]) == ("deny", "unreadable")
    assert entry["input"]["path"] == "f\ud800.txt"
    assert [p.name for p in workdir.iterdir() if p.name.startswith("f")] == []
