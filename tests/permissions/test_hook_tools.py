"""The Claude Code view of a tool call and back: what a hook reads, and how its updatedInput
becomes our input again."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.permissions.hook_tools import claude_input, claude_name, from_claude_input

ROOT = Path("/srv/repo")


@pytest.mark.parametrize("name, ours", [
    ("shell", {"command": "ls", "timeout_s": 2.5}),
    ("write_file", {"path": "src/a.py", "content": "x"}),
    ("edit_file", {"path": "a.py", "old_string": "a", "new_string": "b", "replace_all": True}),
    ("read_file", {"path": "a.py", "offset": 3, "limit": 10}),
    ("grep", {"pattern": "x", "path": "src", "glob": "*.py"}),
    ("mcp__srv__tool", {"q": 1}),
])
def test_an_unchanged_input_maps_back_to_itself(name: str, ours: dict) -> None:
    assert from_claude_input(name, {}, ours, ROOT) == ours


def test_fields_a_hook_changes_come_back_in_our_names() -> None:
    shown = claude_input("shell", {"command": "ls", "timeout_s": 2.5}, ROOT)
    assert shown == {"command": "ls", "description": "", "timeout": 2500}
    back = from_claude_input("shell", {"command": "ls -a", "timeout": 1000},
                             {"command": "ls"}, ROOT)
    assert back == {"command": "ls -a", "timeout_s": 1.0}
    moved = from_claude_input("write_file", {"file_path": "/srv/repo/b/c.txt"},
                              {"path": "a.txt", "content": "x"}, ROOT)
    assert moved == {"content": "x", "path": "b/c.txt"}


@pytest.mark.parametrize("path", ["/etc/passwd", "/srv/repo-other/x", "/srv/repo/../x"])
def test_a_path_outside_the_root_stays_absolute_for_confinement_to_refuse(path: str) -> None:
    back = from_claude_input("write_file", {"file_path": path}, {"path": "a", "content": ""},
                             ROOT)
    assert Path(back["path"]).is_absolute()


def test_names() -> None:
    assert [claude_name(n) for n in ("shell", "write_file", "create_task", "mcp__s__t")] == [
        "Bash", "Write", "create_task", "mcp__s__t"]
