"""The dependency graph of a board, drawn: text for the terminal, Mermaid and DOT for docs
and review tools (`agent-cli tasks graph`, `/tasks graph`).

Edges go from a blocker to what it unblocks. In the text form each task is drawn once: a
task reached again (a shared dependency) is named with "(see above)", an edge back into the
path being drawn is a cycle. Dependencies on missing or corrupt tasks appear as their own
nodes, and every problem the board reports is listed under the graph. Subjects, owners and
problems are shown through `safetext.visible` (one line each): a subject can neither drive the
terminal nor add lines to a Mermaid or DOT file. Pure functions of a BoardSnapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..safetext import visible
from . import dag
from .models import BoardSnapshot

MARKS = {
    "pending": "[ ]",
    "blocked": "[!]",
    "in_progress": "[>]",
    "completed": "[x]",
    "missing": "[?]",
    "corrupt": "[E]",
}
COLOURS = {  # mermaid/dot fill per state
    "pending": "#ffffff",
    "blocked": "#fde2e2",
    "in_progress": "#fff4c2",
    "completed": "#d8f5d8",
    "missing": "#e6e6e6",
    "corrupt": "#f5b7b7",
}


@dataclass(frozen=True)
class Node:
    id: int
    state: str  # a MARKS key
    subject: str = ""
    owner: str | None = None
    waits_for: tuple[int, ...] = ()  # a blocked task's open blockers

    def label(self) -> str:
        if self.state in ("missing", "corrupt"):
            what = "does not exist" if self.state == "missing" else "file is corrupt"
            return f"#{self.id} ({what})"
        owner = f" @{self.owner}" if self.owner else ""
        return f"#{self.id} {self.subject}{owner}"


@dataclass
class Graph:
    nodes: dict[int, Node] = field(default_factory=dict)
    edges: list[tuple[int, int]] = field(default_factory=list)  # (blocker, blocked), sorted
    problems: list[str] = field(default_factory=list)
    _children: dict[int, list[int]] | None = None

    def children(self, node_id: int) -> list[int]:
        if self._children is None:
            kids: dict[int, list[int]] = {}
            for a, b in self.edges:
                kids.setdefault(a, []).append(b)
            self._children = kids
        return self._children.get(node_id, [])

    def roots(self) -> list[int]:
        targets = {b for _, b in self.edges}
        return [i for i in sorted(self.nodes) if i not in targets]


def build(snapshot: BoardSnapshot) -> Graph:
    tasks = snapshot.by_id()
    corrupt = {p.task_id for p in snapshot.problems if p.task_id is not None} - set(tasks)
    graph = Graph()
    for t in snapshot.tasks:
        state: str = t.status
        if state == "pending" and dag.waiting_on(t, tasks):
            state = "blocked"
        waits = tuple(dag.waiting_on(t, tasks)) if state == "blocked" else ()
        subject = visible(" ".join(t.subject.split()), one_line=True)
        owner = visible(t.owner, one_line=True) if t.owner else None
        graph.nodes[t.id] = Node(t.id, state, subject, owner, waits)
    for t in snapshot.tasks:
        for dep in dict.fromkeys(t.blocked_by):
            if dep not in graph.nodes:
                graph.nodes[dep] = Node(dep, "corrupt" if dep in corrupt else "missing")
            graph.edges.append((dep, t.id))
    for cid in sorted(corrupt):
        graph.nodes.setdefault(cid, Node(cid, "corrupt"))
    graph.edges.sort()
    graph.problems = [visible(p.line(), one_line=True) for p in snapshot.problems]
    return graph


def render_text(snapshot: BoardSnapshot, width: int = 100) -> str:
    """The graph as an indented tree per root, each task drawn once."""
    graph = build(snapshot)
    if not graph.nodes:
        return "no tasks on the board"
    n_tasks = len(snapshot.tasks)
    lines = [f"task graph: {n_tasks} task{'s' if n_tasks != 1 else ''}, "
             f"{len(graph.edges)} dependenc{'ies' if len(graph.edges) != 1 else 'y'} "
             "(blocker -> what it unblocks)"]
    drawn: set[int] = set()
    for start in [*graph.roots(), *sorted(graph.nodes)]:  # then what only cycles reach
        if start not in drawn:
            _draw_tree(graph, start, drawn, lines, width)
    if graph.problems:
        lines.append("problems:")
        lines += [f"  {p}" for p in graph.problems]  # whole: what to fix
    return "\n".join(lines)


def _draw_tree(graph: Graph, root: int, drawn: set[int], lines: list[str], width: int) -> None:
    """Draw `root` and what it unblocks, depth first (iterative: a chain of thousands of
    tasks must not hit the recursion limit)."""
    on_path: list[int] = []  # the ancestors of the node being drawn (and as a set)
    ancestors: set[int] = set()
    stack: list[tuple[int, str, str, int]] = [(root, "", "", 0)]  # node, prefix, branch, depth
    while stack:
        node_id, prefix, branch, depth = stack.pop()
        ancestors.difference_update(on_path[depth:])
        del on_path[depth:]
        node = graph.nodes[node_id]
        text = f"{MARKS[node.state]} {node.label()}"
        if node.waits_for:
            text += f" (waits for {dag.ids_text(node.waits_for)})"
        if node_id in ancestors:
            lines.append(_cut(f"{prefix}{branch}{text}  <- cycle", width))
            continue
        if node_id in drawn:
            lines.append(_cut(f"{prefix}{branch}{text}  (see above)", width))
            continue
        drawn.add(node_id)
        on_path.append(node_id)
        ancestors.add(node_id)
        lines.append(_cut(f"{prefix}{branch}{text}", width))
        inner = prefix + ("" if not branch else ("    " if branch.startswith("└") else "│   "))
        inner = inner[:width]  # deeper than the screen: the line is cut anyway
        kids = graph.children(node_id)
        for i in reversed(range(len(kids))):
            last = i == len(kids) - 1
            stack.append((kids[i], inner, "└─> " if last else "├─> ", depth + 1))


def _cut(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 3] + "..."


def _escape_mermaid(text: str) -> str:
    for raw, code in (("&", "#amp;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;")):
        text = text.replace(raw, code)
    return text


def _escape_dot(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _state_text(node: Node) -> str:
    return node.state.replace("_", " ")


def render_mermaid(snapshot: BoardSnapshot) -> str:
    """A Mermaid flowchart (top-down); problems as %% comments."""
    graph = build(snapshot)
    lines = ["flowchart TD"]
    lines += _node_lines(graph, lambda n: (
        f'  t{n.id}["{_escape_mermaid(n.label())}<br/>{_state_text(n)}"]:::{n.state}'))
    lines += [f"  t{a} --> t{b}" for a, b in graph.edges]
    lines += [f"  classDef {s} fill:{c},stroke:#333" for s, c in COLOURS.items()]
    lines += [f"  %% problem: {p}" for p in graph.problems]
    return "\n".join(lines)


def render_dot(snapshot: BoardSnapshot) -> str:
    """A Graphviz digraph; problems as // comments."""
    graph = build(snapshot)
    lines = ["digraph tasks {", "  rankdir=TB;",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
    lines += _node_lines(graph, lambda n: (
        f'  t{n.id} [label="{_escape_dot(n.label())}\\n{_state_text(n)}", '
        f'fillcolor="{COLOURS[n.state]}"];'))
    lines += [f"  t{a} -> t{b};" for a, b in graph.edges]
    lines += [f"  // problem: {' '.join(p.split())}" for p in graph.problems]
    lines.append("}")
    return "\n".join(lines)


def _node_lines(graph: Graph, line: Callable[[Node], str]) -> list[str]:
    return [line(graph.nodes[i]) for i in sorted(graph.nodes)]


RENDERERS = {"text": render_text, "mermaid": render_mermaid, "dot": render_dot}
