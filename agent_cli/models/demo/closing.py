"""The demo lead's closing text, derived from what this turn's tools returned -- never from the
scenario's script: what it did (each result as returned), the board as the turn's last
list_tasks showed it (who holds what by then), who may take the new tasks (their routing, and
the teammates this turn started or found running), what waits for what, and what the user can
do here: keys in the REPL, flags in a headless run (the lead's system prompt says which)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .conversation import Pair, first_line, task_id_in
from .texts import words

# list_tasks / create_task lines (board_tools.task_line): "#4 [in_progress] Subject (owner
# coder) blocked by #2, #3 [role coder, plan required]".
TASK_LINE_RE = re.compile(
    r"^#(?P<id>\d+) \[(?P<status>\w+)\] (?P<subject>.*?)"
    r"(?: \(owner (?P<owner>[a-z][a-z0-9_-]*)\))?(?: blocked by (?P<blocked>#\d+(?:, #\d+)*))?"
    r"(?: \[(?P<route>[^\]]*)\])?(?: — .*)?$"
)
RUNNING_RE = re.compile(r"^([a-z][a-z0-9_-]*) is already running \(([^)]*)\)")
LISTED_RE = re.compile(r"^([a-z][a-z0-9_-]*) \(([^)]*)\): (\w+)")
HEADLESS_RE = re.compile(r"^## This run is headless", re.MULTILINE)


@dataclass
class Teammates:
    """Who this turn started, and who it found already running, with their roles."""

    started: dict[str, str] = field(default_factory=dict)
    running: dict[str, str] = field(default_factory=dict)  # a spawn found them running
    listed: dict[str, str] = field(default_factory=dict)  # list_teammates: running

    def with_role(self, role: str) -> list[str]:
        want = role.casefold()
        every = {**self.listed, **self.running, **self.started}
        return [n for n, r in every.items() if r.casefold() == want]


def is_headless(system: str) -> bool:
    return bool(HEADLESS_RE.search(system))


def join(items: list[str], lang: str) -> str:
    w = words(lang)
    if lang == "zh" or len(items) < 2:
        return w["and"].join(items)
    return ", ".join(items[:-1]) + w["and"] + items[-1]


def ids_text(ids: list[int], lang: str) -> str:
    return join([f"#{i}" for i in ids], lang)


def created(pairs: list[Pair]) -> list[tuple[int, dict[str, Any]]]:
    """(id, the create_task input) of every task this turn created."""
    out = []
    for p in pairs:
        if p.use.name == "create_task" and p.ok:
            task_id = task_id_in(p.text)
            if task_id is not None:
                out.append((task_id, p.use.input))
    return out


def teammates(pairs: list[Pair]) -> Teammates:
    found = Teammates()
    for p in pairs:
        if not p.ok:
            continue
        if p.use.name == "spawn_teammate":
            m = RUNNING_RE.match(p.text)
            if m:
                found.running[m.group(1)] = m.group(2)
            elif p.text.startswith("spawned "):
                found.started[p.use.input.get("name", "")] = p.use.input.get("role", "")
        elif p.use.name == "list_teammates":
            for line in p.text.splitlines():
                m = LISTED_RE.match(line)
                if m and m.group(3) not in ("shutdown", "failed"):
                    found.listed.setdefault(m.group(1), m.group(2))
    return found


def board_lines(pairs: list[Pair], ids: list[int], lang: str) -> list[str]:
    """The new tasks as the turn's last list_tasks showed them."""
    listing = next((p for p in reversed(pairs) if p.use.name == "list_tasks" and p.ok), None)
    if listing is None:
        return []
    w = words(lang)
    lines = []
    for line in listing.text.splitlines():
        m = TASK_LINE_RE.match(line.strip())
        if not m or int(m.group("id")) not in ids:
            continue
        state = w.get(m.group("status"), m.group("status"))
        if m.group("owner"):
            state += f" ({m.group('owner')})"
        elif m.group("blocked"):
            blockers = [int(b) for b in re.findall(r"\d+", m.group("blocked"))]
            state += w["comma"] + w["blocked"].format(ids=ids_text(blockers, lang))
        lines.append(f"- #{m.group('id')} {m.group('subject')}: {state}")
    return [w["board"], *lines] if lines else []


def routing_lines(new: list[tuple[int, dict[str, Any]]], mates: Teammates,
                  lang: str) -> list[str]:
    """Who may take the new tasks, what waits for what, what the host checks."""
    w = words(lang)
    groups: dict[tuple[str, str, bool], list[int]] = {}
    for task_id, args in new:
        key = (args.get("assignee") or "", args.get("role") or "", bool(args.get("require_plan")))
        groups.setdefault(key, []).append(task_id)
    out = []
    for (assignee, role, plan), ids in groups.items():
        which = ids_text(ids, lang)
        if assignee:
            out.append(w["assignee_plan" if plan else "assignee"].format(name=assignee, ids=which))
        elif role:
            who = mates.with_role(role)
            key = "role" if who else "role_nobody"
            out.append(w[key].format(role=role, ids=which, who=join(who, lang)))
        else:
            out.append(w["anyone"].format(ids=which))
    for task_id, args in new:
        blockers = [b for b in args.get("blocked_by") or [] if isinstance(b, int)]
        if blockers:
            be = "is" if len(blockers) == 1 else "are"
            out.append(w["waits"].format(id=f"#{task_id}", ids=ids_text(blockers, lang), be=be))
        check = args.get("verify")
        if isinstance(check, dict) and check.get("command"):
            expected = (w["expected_file"].format(path=check["expected_stdout_file"])
                        if check.get("expected_stdout_file")
                        else repr(check.get("expected_stdout", "")))
            out.append(w["verify"].format(id=f"#{task_id}", command=check["command"],
                                          expected=expected))
    return out


def team_lines(mates: Teammates, lang: str, named: str = "") -> list[str]:
    """Who this turn started (unless the routing lines already named them all) and whom a
    spawn found running."""
    w = words(lang)
    out = []
    if mates.started and not all(re.search(rf"\b{n}\b", named) for n in mates.started):
        out.append(w["started"].format(names=join(list(mates.started), lang)))
    spawned_again = [n for n in mates.running if n not in mates.started]
    if spawned_again:
        out.append(w["running"].format(names=join(spawned_again, lang)))
    return out


def protocol_lines(pairs: list[Pair], lang: str, headless: bool) -> list[str]:
    """Shutdown requests and messages that went out, in the protocol's own terms."""
    w = words(lang)
    asked = [p.use.input.get("name", "") for p in pairs if p.use.name == "request_shutdown"
             and p.ok]
    told = [p.use.input.get("to", "") for p in pairs if p.use.name == "send_message" and p.ok]
    out = []
    if asked:
        out.append(w["shutdown"].format(names=join(asked, lang))
                   + ("" if headless else " " + w["shutdown_repl"]))
    if told:
        out.append(w["message"].format(names=join(told, lang)))
    return out


def what_i_did(pairs: list[Pair], lang: str) -> list[str]:
    return [words(lang)["did"]] + [
        f"- {'✓' if pair.ok else '✗'} {call_label(pair.use.name, pair.use.input)}: "
        f"{result_line(pair, lang)}" for pair in pairs]


def result_line(pair: Pair, lang: str) -> str:
    """A result in one line; a board listing as its size (its tasks are shown below)."""
    if pair.use.name == "list_tasks" and pair.ok:
        count = sum(1 for line in pair.text.splitlines() if TASK_LINE_RE.match(line.strip()))
        return words(lang)["listed"].format(count=count)
    if pair.use.name == "list_teammates" and pair.ok:
        count = sum(1 for line in pair.text.splitlines() if LISTED_RE.match(line))
        return words(lang)["team_listed"].format(count=count)
    return first_line(pair.text, 160)


def call_label(name: str, args: dict[str, Any]) -> str:
    key = (args.get("subject") or args.get("name") or args.get("to") or args.get("path")
           or args.get("command") or args.get("request_id") or "")
    return f"{name} {key}".strip()


def closing_sections(pairs: list[Pair], lang: str, headless: bool) -> list[list[str]]:
    """The sections after the inbox: what was done, then either the failure line or what
    the results add up to."""
    if not pairs:
        return []
    sections = [what_i_did(pairs, lang)]
    w = words(lang)
    if any(not p.ok for p in pairs if p.use.name != "read_file"):
        return [*sections, [w["failed"]]]
    new = created(pairs)
    ids = [i for i, _ in new]
    mates = teammates(pairs)
    sections.append(board_lines(pairs, ids, lang))
    routes = routing_lines(new, mates, lang)
    said = [*routes, *team_lines(mates, lang, named=" ".join(routes)),
            *protocol_lines(pairs, lang, headless)]
    if new:
        said.append(w["headless" if headless else "repl"])
    sections.append([("" if lang == "zh" else " ").join(said)] if said else [])
    return sections
