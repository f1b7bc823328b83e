"""The demo teammate: does a claimed task for real, one tool call (or a batch of reads) per
model call, and derives every step from the conversation.

The task is the newest `<auto-claimed-task ...>` (or, after a restart, `<resumed-task ...>`)
block, read back by agent_cli.framing (which writes it). Its description is read by the
convention of texts.py: files named are read, commands in backticks are run, files after
"Write"/"Create"/"Add the line" are written. A step counts as done once a result for it
came back (reads) or came back without an error (commands, writes). Then complete_task with
the claim token. A denial, a failure or a refused completion is reported to the lead and the
teammate idles with the task still its own. A plan-gate refusal gets a plan, then idle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...framing import framed_tasks
from ..base import Message, ModelRequest
from ..reply import Call, Reply
from .conversation import Pair, first_line, last_batch, last_opening, message_text, pairs_since

FILE_RE = re.compile(
    r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.(?:py|txt|md|json|toml|yaml|yml|csv|js|ts|sh|cfg|ini|"
    r"html|css|rs|go|c|h))(?![\w-])"
)
FENCE_RE = re.compile(r"\s*```[\w+-]*\n(.*?)```", re.DOTALL)
TICK_RE = re.compile(r"`([^`\n]+)`")
QUOTE_RE = re.compile(r"\"([^\"]+)\"|“([^”]+)”")
SENTENCE_RE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
APPEND_RE = re.compile(r"\b(?:add|append)\b.*\bline\b|追加|添加一行|加一行", re.IGNORECASE)
WRITE_RE = re.compile(r"\b(?:write|create|save)\b|写入|创建|写", re.IGNORECASE)
LIST_RE = re.compile(r"\blist (?:the |all )?files\b|列出.*文件", re.IGNORECASE)
# A plan asked for in words (the lead's spawn prompt, a message); the host's own note on a
# task block is read by framing (TaskInfo.requires_plan).
PLAN_ASKED_RE = re.compile(r"submit a plan|submit_plan first|plan (?:is )?required|先提交计划")
# In a system prompt only an explicit requirement counts (a general prompt may mention plans).
SYSTEM_PLAN_RE = re.compile(r"submit a plan with submit_plan|require_plan\W+true|plan required",
                            re.IGNORECASE)
PLAN_REFUSAL_RE = re.compile(r"\bplan\b|计划", re.IGNORECASE)
LINE_NO_RE = re.compile(r"^\s*\d+[\t|:→]\s?")
EFFECTFUL = {"shell", "write_file", "edit_file"}


@dataclass
class TaskInfo:
    id: int
    token: str
    subject: str
    description: str
    index: int  # the message that carried the block
    block: str  # the block as the host wrote it
    requires_plan: bool = False


@dataclass
class Step:
    kind: str  # read | glob | run | write | append
    target: str  # path, pattern or command
    content: str = ""

    @property
    def tool(self) -> str:
        return {"read": "read_file", "glob": "glob", "run": "shell"}.get(self.kind, "write_file")

    @property
    def effectful(self) -> bool:
        return self.kind in {"run", "write", "append"}

    def matches(self, pair: Pair) -> bool:
        if pair.use.name != self.tool:
            return False
        key = "command" if self.kind == "run" else "pattern" if self.kind == "glob" else "path"
        return str(pair.use.input.get(key, "")) == self.target

    def label(self) -> str:
        return {"read": f"read {self.target}", "glob": "list the files",
                "run": f"run `{self.target}`", "write": f"write {self.target}",
                "append": f"add a line to {self.target}"}[self.kind]


def current_task(messages: list[Message]) -> TaskInfo | None:
    """The newest auto-claimed (or resumed, after a restart) task in the conversation."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role != "user":
            continue
        tasks = framed_tasks(message_text(messages[i]))
        if not tasks:
            continue
        t = ([t for t in tasks if t.resumed] or tasks)[-1]
        return TaskInfo(t.id, t.claim_token, t.subject, t.description, i, t.block,
                        t.requires_plan)
    return None


def parse_steps(description: str) -> list[Step]:
    """What a task description asks for, in the order reads, listing, commands, writes."""
    fences: list[str] = []

    def keep_fence(m: re.Match[str]) -> str:
        fences.append(m.group(1))
        return f" FENCE{len(fences) - 1} "

    text = FENCE_RE.sub(keep_fence, description)
    runs = [Step("run", c.strip()) for c in TICK_RE.findall(text)]
    text = TICK_RE.sub(" CMD ", text)
    reads: list[str] = []
    writes: list[Step] = []
    globs: list[Step] = []
    for sentence in SENTENCE_RE.split(text):
        quoted = [a or b for a, b in QUOTE_RE.findall(sentence)]
        bare = QUOTE_RE.sub(" QUOTE ", sentence)
        files = FILE_RE.findall(bare)
        if LIST_RE.search(bare):
            globs.append(Step("glob", "**/*"))
        kind = "append" if APPEND_RE.search(bare) else "write" if WRITE_RE.search(bare) else ""
        if kind and files:
            fence = re.search(r"FENCE(\d+)", bare)
            content = fences[int(fence.group(1))] if fence else (quoted[0] if quoted else "")
            if content and not content.endswith("\n"):
                content += "\n"
            writes.append(Step(kind, files[0], content))
            files = files[1:]
        reads.extend(f for f in files if f not in reads)
    targets = {w.target for w in writes}
    reads = [f for f in reads if f not in targets]
    reads.extend(w.target for w in writes if w.kind == "append" and w.target not in reads)
    return [*(Step("read", f) for f in reads), *globs, *runs, *writes]


def file_text(pair: Pair | None) -> str:
    """A file's content from a read_file result (line-number prefixes removed)."""
    if pair is None or not pair.ok:
        return ""
    lines = pair.text.splitlines()
    if lines and all(LINE_NO_RE.match(ln) for ln in lines if ln.strip()):
        lines = [LINE_NO_RE.sub("", ln, count=1) for ln in lines]
    return "\n".join(lines) + ("\n" if lines else "")


def step_call(step: Step, span: list[Pair]) -> tuple[str, dict[str, Any]]:
    if step.kind == "read":
        return ("read_file", {"path": step.target})
    if step.kind == "glob":
        return ("glob", {"pattern": step.target})
    if step.kind == "run":
        return ("shell", {"command": step.target})
    content = step.content
    if step.kind == "append":
        reads = [p for p in span if p.use.name == "read_file"
                 and p.use.input.get("path") == step.target]
        existing = file_text(reads[-1] if reads else None)
        if existing and not existing.endswith("\n"):
            existing += "\n"
        content = existing + step.content
    return ("write_file", {"path": step.target, "content": content})


def outcome(step: Step, span: list[Pair]) -> str:
    """One phrase naming what a finished step found or did."""
    pair = next((p for p in reversed(span) if step.matches(p)), None)
    if pair is None:
        return step.label()
    if step.kind == "read":
        if not pair.ok:
            return f"{step.target}: {first_line(pair.text, 60)}"
        return f"{step.target}: {first_line(file_text(pair), 60) or '(empty)'}"
    if step.kind == "glob":
        entries = [ln for ln in pair.text.splitlines() if ln.strip()
                   and not ln.startswith((".", "no files match", "... "))]
        return f"found {len(entries)} files and folders (not counting hidden ones)"
    if step.kind == "run":
        shown = _stdout_line(pair.text)
        m = re.fullmatch(r"python3? ([\w./-]+\.py)", step.target)
        if m:
            return f"{m.group(1)} prints {shown}"
        return f"`{step.target}` printed {shown}"
    created = pair.text.startswith("Created")  # write_file says whether the file was there
    if step.kind == "append":
        line = step.content.strip()
        if created:
            return f'created {step.target} with the line "{line}"'
        return f'added the line "{line}" to {step.target}'
    return ("created " if created else "wrote ") + step.target


def _stdout_line(text: str) -> str:
    """What a shell result printed, in a few words: the line, or the count and the last."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if lines and re.match(r"^\[(exit|killed|command)\b", lines[-1]):
        lines = lines[:-1]
    if not lines or lines == ["(no output)"]:
        return "nothing"
    if len(lines) == 1:
        return lines[0][:60]
    return f"{len(lines)} lines, the last: {lines[-1][:60]}"


def teammate_reply(request: ModelRequest) -> Reply:
    """The teammate's next step."""
    messages = request.messages
    start = last_opening(messages)
    batch = last_batch(messages, start)
    tools = {t.name for t in request.tools}
    if any(p.use.name == "idle" for p in batch):
        return Reply("(demo teammate) Waiting.")
    task = current_task(messages)
    span = pairs_since(messages, task.index) if task else []
    if task is None or any(p.use.name == "complete_task" and p.ok for p in span):
        return _no_task(batch, task, tools)
    reaction = _react(task, batch, messages, start, tools)
    if reaction is not None:
        return reaction
    steps = parse_steps(task.description)
    fresh = _since_refused_completion(span)  # a retry reads the files again
    todo = [s for s in steps if not any(
        s.matches(p) and (p.ok or not s.effectful) for p in (span if s.effectful else fresh))]
    if todo and todo[0].effectful and (task.requires_plan or _plan_asked(request, messages)) \
            and not _planned(messages):
        return _submit_plan(task, steps, tools)
    if todo:
        batch_steps = [todo[0]]
        if not todo[0].effectful:
            batch_steps = [s for s in todo if not s.effectful]
        calls = [step_call(s, span) for s in batch_steps]
        text = f"Task #{task.id}: " + ", ".join(s.label() for s in batch_steps) + "."
        return Reply(text, _available(calls, tools))
    order = {"run": 0, "write": 1, "append": 1, "glob": 2, "read": 3}
    written = {s.target for s in steps if s.kind in ("write", "append")}
    said = [s for s in steps if not (s.kind == "read" and s.target in written)]  # the write
    done = [outcome(s, span) for s in sorted(said, key=lambda s: order[s.kind])]  # says it
    done = done or ["nothing concrete to do in the task text"]
    result = "; ".join(done)
    return Reply(f"Task #{task.id} looks done: {result}.",
                 [Call("complete_task", {"task_id": task.id, "claim_token": task.token,
                                         "result": result})])


def _since_refused_completion(span: list[Pair]) -> list[Pair]:
    """The calls after the last refused complete_task (all of them if none was refused), so
    what a result names (a file's content) is what the teammate read for this attempt."""
    refused = [i for i, p in enumerate(span) if p.use.name == "complete_task" and not p.ok]
    return span[refused[-1] + 1:] if refused else span


def _no_task(batch: list[Pair], task: TaskInfo | None, tools: set[str]) -> Reply:
    done = [p for p in batch if p.use.name == "complete_task" and p.ok]
    if done and task is not None:
        return Reply(f"(demo teammate) Task #{task.id} completed: "
                     f"{done[0].use.input.get('result', '')}")
    return Reply("(demo teammate) Nothing in hand; back to the board.",
                 _available([("idle", {})], tools))


def _react(task: TaskInfo, batch: list[Pair], messages: list[Message], start: int,
           tools: set[str]) -> Reply | None:
    """What to do after a failed call in the last batch (None: carry on)."""
    for pair in batch:
        if pair.ok or pair.use.name in {"read_file", "glob", "grep", "idle", "send_message"}:
            continue
        line = first_line(pair.text.strip().removeprefix("Denied: "), 200)
        if pair.use.name in EFFECTFUL and PLAN_REFUSAL_RE.search(pair.text) \
                and "denied" not in pair.text.lower():
            if any(p.use.name == "submit_plan" for p in pairs_since(messages, start)):
                return Reply("(demo teammate) Waiting for the plan answer.", [Call("idle")])
            return _submit_plan(task, parse_steps(task.description), tools)
        verdict = "was denied" if "denied" in pair.text.lower() else "failed"
        what = {"shell": f"running `{pair.use.input.get('command', '')}` {verdict}",
                "write_file": f"writing {pair.use.input.get('path', '')} {verdict}",
                "edit_file": f"editing {pair.use.input.get('path', '')} {verdict}",
                "complete_task": "complete_task was refused"}.get(
                    pair.use.name, f"{pair.use.name} failed")
        note = (f"Task #{task.id} ({task.subject}): {what}: {line} "
                "I keep the task in progress; message me to retry.")
        return Reply(f"(demo teammate) {note}",
                     _available([("send_message", {"to": "lead", "content": note}),
                                 ("idle", {})], tools))
    return None


def _submit_plan(task: TaskInfo, steps: list[Step], tools: set[str]) -> Reply:
    lines = [f"Plan for task #{task.id} ({task.subject}):"]
    lines += [f"{i}. {s.label()}" for i, s in enumerate(steps, 1)]
    lines.append(f"{len(steps) + 1}. complete_task with the claim token")
    return Reply("(demo teammate) Submitting a plan before changing anything.",
                 _available([("submit_plan", {"plan": "\n".join(lines)}), ("idle", {})], tools))


def _plan_asked(request: ModelRequest, messages: list[Message]) -> bool:
    if SYSTEM_PLAN_RE.search(request.system):
        return True
    return any(m.role == "user" and PLAN_ASKED_RE.search(message_text(m)) for m in messages)


def _planned(messages: list[Message]) -> bool:
    return any(p.use.name == "submit_plan" for p in pairs_since(messages, 0))


def _available(calls: list[tuple[str, dict[str, Any]]], tools: set[str]) -> list[Call]:
    """The calls whose tool is offered (all of them when no tool list came)."""
    return [Call(name, args) for name, args in calls if not tools or name in tools]
