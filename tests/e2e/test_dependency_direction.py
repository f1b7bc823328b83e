"""Dependencies point one way: the package's parts import only parts below them, counting
every import Python runs (TYPE_CHECKING blocks aside), so the parts form no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import agent_cli

PACKAGE = Path(agent_cli.__file__).parent
# part -> parts it must never import (docs/ARCHITECTURE.md, "Dependencies point one way")
FORBIDDEN = {
    "claude": {"board", "team", "agent", "tools", "permissions", "ui", "cli", "commands",
               "app", "runtime", "sandbox", "mcp", "models"},
    "sandbox": {"board", "team", "agent", "tools", "permissions", "ui", "cli", "commands",
                "app", "runtime"},
    "board": {"team", "agent", "tools", "permissions", "ui", "cli", "commands", "app", "pg"},
    "tools": {"team", "agent", "permissions", "ui", "cli", "commands", "app", "runtime"},
    "permissions": {"team", "agent", "ui", "cli", "commands", "app", "runtime"},
    "agent": {"team", "ui", "cli", "commands", "app", "runtime"},
    "team": {"ui", "cli", "commands", "app", "pg"},
    # the PostgreSQL backend: the stores' models (board/, team/) and the broker's types below it
    "pg": {"agent", "tools", "ui", "cli", "commands", "app", "runtime", "stores"},
    "runtime": {"ui", "cli", "commands", "app"},
    # the stores' factory sits beside runtime; the types every backend builds on are a base
    "stores": {"ui", "cli", "commands", "app", "runtime"},
    "storeset": {"board", "team", "agent", "tools", "permissions", "ui", "cli", "commands",
                 "app", "runtime", "stores", "pg"},
    "store_api": {"board", "team", "agent", "tools", "permissions", "ui", "cli", "commands",
                  "app", "runtime", "stores", "pg"},
}


def _module(path: Path) -> str:
    parts = ("agent_cli", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[str]:
    """Every agent_cli module `path` imports at run time (not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text())
    skipped = {id(sub) for node in ast.walk(tree)
               if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
               for sub in ast.walk(node)}
    package = _module(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            name = ".".join(p for p in (base, node.module or "") if p)
            found += [f"{name}.{a.name}" for a in node.names] if node.module is None else [name]
    return [m for m in found if m.startswith("agent_cli.")]


def _part(module: str) -> str:
    bits = module.split(".")
    return bits[1] if len(bits) > 1 else bits[0]


def _edges() -> dict[str, dict[str, str]]:
    """part -> {imported part: one example 'module -> module'}."""
    edges: dict[str, dict[str, str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _module(path)
        for target in _imports(path):
            a, b = _part(source), _part(target)
            if a != b:
                edges.setdefault(a, {}).setdefault(b, f"{source} -> {target}")
    return edges


def test_no_part_imports_a_part_above_it():
    edges = _edges()
    wrong = [example for part, banned in FORBIDDEN.items()
             for target, example in edges.get(part, {}).items() if target in banned]
    assert wrong == []


def test_the_parts_form_no_import_cycle():
    edges = _edges()

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            here = todo.pop()
            for nxt in edges.get(here, {}):
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    cycles = sorted(f"{a} <-> {b} ({example})" for a, targets in edges.items()
                    for b, example in targets.items() if reaches(b, a))
    assert cycles == []


def test_the_checks_see_real_imports():
    """The walker finds the imports it must judge (a check that saw nothing would pass)."""
    edges = _edges()
    assert "team" in edges["app"] and "tools" in edges["agent"]
    assert "tools" in edges["team"] and "permissions" in edges["runtime"]
