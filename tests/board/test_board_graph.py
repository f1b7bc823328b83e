"""`agent-cli tasks graph`: the dependency DAG drawn as text, Mermaid and DOT. Diamonds draw
a shared dependency once, chains nest, cycles and missing or corrupt ids show as nodes and
problems; Mermaid and DOT are parsed back (and DOT rendered by graphviz when installed)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_cli.board import TaskBoard
from agent_cli.cli import main


def board_with(workdir: Path, deps: dict[int, list[int]]) -> TaskBoard:
    """Tasks 1..N ("task N"); dependencies on lower existing ids through the board, the rest
    (cycles, missing ids) written by hand as a damaged board would have them."""
    board = TaskBoard(workdir / ".tasks")
    by_hand = {}
    for i in sorted(deps):
        legal = [d for d in deps[i] if d < i and d in deps]
        board.create(f"task {i}", blocked_by=legal)
        if legal != deps[i]:
            by_hand[i] = deps[i]
    for i, blockers in by_hand.items():
        path = workdir / ".tasks" / f"task_{i}.json"
        data = json.loads(path.read_text())
        data["blockedBy"] = blockers
        path.write_text(json.dumps(data))
    return TaskBoard(workdir / ".tasks")  # a fresh reader: sees the hand edits at once


def graph(workdir: Path, capsys, fmt: str = "text") -> tuple[int, str, str]:
    code = main(["-C", str(workdir), "tasks", "graph", "--format", fmt])
    out, err = capsys.readouterr()
    return code, out, err


def parse_mermaid(text: str) -> tuple[dict[int, str], set[tuple[int, int]]]:
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    nodes = {int(m[1]): m[2] for line in lines
             if (m := re.fullmatch(r'  t(\d+)\["(.*)"\]:::(\w+)', line))}
    edges = {(int(m[1]), int(m[2])) for line in lines
             if (m := re.fullmatch(r"  t(\d+) --> t(\d+)", line))}
    return nodes, edges


def parse_dot(text: str) -> tuple[dict[int, str], set[tuple[int, int]]]:
    assert text.startswith("digraph tasks {") and text.rstrip().endswith("}")
    nodes = {int(m[1]): m[2] for m in re.finditer(r'  t(\d+) \[label="((?:[^"\\]|\\.)*)"', text)}
    edges = {(int(m[1]), int(m[2])) for m in re.finditer(r"  t(\d+) -> t(\d+);", text)}
    return nodes, edges


def rendered_by_graphviz(text: str) -> tuple[set[str], set[tuple[str, str]]] | None:
    if shutil.which("dot") is None:
        return None
    proc = subprocess.run(["dot", "-Tjson"], input=text, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    names = {o["_gvid"]: o["name"] for o in data.get("objects", [])}
    edges = {(names[e["tail"]], names[e["head"]]) for e in data.get("edges", [])}
    return set(names.values()), edges


def test_a_diamond_draws_the_shared_dependency_once(workdir: Path, capsys) -> None:
    board = board_with(workdir, {1: [], 2: [1], 3: [1], 4: [2, 3]})
    token = board.claim(1, "alice").claim_token
    board.complete(1, "alice", token, "base done")
    board.claim(2, "bob")
    code, out, _ = graph(workdir, capsys)
    assert code == 0
    assert out.splitlines() == [
        "task graph: 4 tasks, 4 dependencies (blocker -> what it unblocks)",
        "[x] #1 task 1 @alice",
        "├─> [>] #2 task 2 @bob",
        "│   └─> [!] #4 task 4 (waits for #2, #3)",
        "└─> [ ] #3 task 3",
        "    └─> [!] #4 task 4 (waits for #2, #3)  (see above)",
    ]
    for fmt, parse in (("mermaid", parse_mermaid), ("dot", parse_dot)):
        code, out, err = graph(workdir, capsys, fmt)
        assert code == 0 and err == ""
        nodes, edges = parse(out)
        assert edges == {(1, 2), (1, 3), (2, 4), (3, 4)}
        assert sorted(nodes) == [1, 2, 3, 4]
        assert "#2 task 2 @bob" in nodes[2] and "in progress" in nodes[2]


def test_a_chain_nests_and_graphviz_renders_it(workdir: Path, capsys) -> None:
    board_with(workdir, {1: [], 2: [1], 3: [2]})
    _, out, _ = graph(workdir, capsys)
    assert out.splitlines()[1:] == [
        "[ ] #1 task 1",
        "└─> [!] #2 task 2 (waits for #1)",
        "    └─> [!] #3 task 3 (waits for #2)",
    ]
    _, dot, _ = graph(workdir, capsys, "dot")
    found = rendered_by_graphviz(dot)
    if found is not None:
        assert found == ({"t1", "t2", "t3"}, {("t1", "t2"), ("t2", "t3")})


def test_a_cycle_is_drawn_once_and_reported(workdir: Path, capsys) -> None:
    board_with(workdir, {1: [3], 2: [1], 3: [2], 4: []})
    code, out, _ = graph(workdir, capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[1:5] == [
        "[ ] #4 task 4",
        "[!] #1 task 1 (waits for #3)",
        "└─> [!] #2 task 2 (waits for #1)",
        "    └─> [!] #3 task 3 (waits for #2)",
    ]
    assert lines[5] == "        └─> [!] #1 task 1 (waits for #3)  <- cycle"
    assert lines[6] == "problems:"
    assert "dependency cycle #1 -> #3 -> #2 -> #1" in out
    for fmt, parse in (("mermaid", parse_mermaid), ("dot", parse_dot)):
        _, text, err = graph(workdir, capsys, fmt)
        assert parse(text)[1] == {(3, 1), (1, 2), (2, 3)}
        assert "dependency cycle" in err and "problem: " in text
    found = rendered_by_graphviz(graph(workdir, capsys, "dot")[1])
    if found is not None:
        assert ("t3", "t1") in found[1]


def test_missing_and_corrupt_ids_become_nodes_and_problems(workdir: Path, capsys) -> None:
    board_with(workdir, {1: [9], 2: [3], 3: []})
    (workdir / ".tasks" / "task_3.json").write_text('{"id": 3, "subject": ')  # torn by hand
    code, out, _ = graph(workdir, capsys)
    assert code == 0
    assert "[E] #3 (file is corrupt)\n└─> [!] #2 task 2 (waits for #3)" in out
    assert "[?] #9 (does not exist)\n└─> [!] #1 task 1 (waits for #9)" in out
    problems = out.split("problems:\n", 1)[1]
    assert "is blocked by #9, which does not exist" in problems
    assert "task_3.json: not valid JSON" in problems
    for fmt, parse in (("mermaid", parse_mermaid), ("dot", parse_dot)):
        _, text, err = graph(workdir, capsys, fmt)
        nodes, edges = parse(text)
        assert edges == {(9, 1), (3, 2)}
        assert "does not exist" in nodes[9] and "corrupt" in nodes[3]
        assert "which does not exist" in err


def test_labels_with_quotes_and_markup_survive_both_formats(workdir: Path, capsys) -> None:
    board = TaskBoard(workdir / ".tasks")
    board.create('say "hi" <b>&</b> \\ back')
    _, mermaid, _ = graph(workdir, capsys, "mermaid")
    assert parse_mermaid(mermaid)[0][1].startswith("#1 say #quot;hi#quot; #lt;b#gt;#amp;")
    _, dot, _ = graph(workdir, capsys, "dot")
    assert parse_dot(dot)[0][1].startswith('#1 say \\"hi\\" <b>&</b> \\\\ back')
    found = rendered_by_graphviz(dot)
    if found is not None:
        assert found[0] == {"t1"}


def test_an_empty_board_says_so(workdir: Path, capsys) -> None:
    assert graph(workdir, capsys) == (0, "no tasks on the board\n", "")


@pytest.mark.parametrize("arg", ["graph"])
def test_slash_tasks_graph_shows_the_text_form(workdir: Path, arg: str) -> None:
    import io

    from rich.console import Console

    from agent_cli.ui.render import UiSettings
    from agent_cli.ui.slash import SlashContext, dispatch

    board_with(workdir, {1: [], 2: [1]})

    class Rt:
        board = TaskBoard(workdir / ".tasks")

    out = io.StringIO()
    assert dispatch(SlashContext(Console(file=out, width=80), Rt(), None, UiSettings()),
                    f"/tasks {arg}").ok
    assert "[ ] #1 task 1\n└─> [!] #2 task 2 (waits for #1)" in out.getvalue()


def test_a_chain_of_thousands_is_drawn_without_recursion_and_in_whole_lines() -> None:
    from agent_cli.board.graph_render import render_dot, render_mermaid, render_text
    from agent_cli.board.models import BoardSnapshot, Task

    now = "2026-03-01T12:00:00.000Z"
    tasks = [Task(id=i, subject=f"step {i}", blocked_by=[i - 1] if i > 1 else [],
                  created_at=now, updated_at=now) for i in range(1, 5001)]
    snap = BoardSnapshot(tasks=tasks)
    text = render_text(snap, width=80)
    lines = text.splitlines()
    assert len(lines) == 5001 and all(len(line) <= 80 for line in lines)
    assert lines[1] == "[ ] #1 step 1" and lines[-1].endswith("...")
    assert render_mermaid(snap).count(" --> ") == 4999
    assert render_dot(snap).count(" -> ") == 4999
