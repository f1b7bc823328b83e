"""What the demo lead understands: the README's demo prompts and close variants (English and
Chinese), matched by keywords, and the help text it answers with otherwise.

`parse_intent(text)` returns an Intent: which scenario, the teammate names it mentions, the
number of tasks asked for, and the language to answer in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from .conversation import language

Scenario = Literal["board", "coder", "abc", "verify", "plan", "shutdown", "message", "help"]

DEMO_PROMPTS: tuple[str, ...] = (
    "Create 3 tasks on the board, then spawn alice and bob. Watch them auto-claim.",
    "Spawn a coder teammate and let it find work from the task board itself.",
    "Create tasks with dependencies. Watch teammates respect the blocked order.",
    "创建 A、B 和依赖二者的 C，再启动 alice、bob 自主认领并完成",
    "Check whether main.py's output matches expected.txt",
    "Spawn writer with plan approval: she adds a line to NOTES.md",
    "Shut down alice",
)
# Understood too, but not a scenario of its own in the README.
EXTRA_PROMPTS: tuple[str, ...] = ("Tell writer to retry",)
MESSAGE_RE = re.compile(
    r"^\s*(?:tell|ask|message)\s+([a-z][a-z0-9_-]{0,31})\b[\s,:]*(?:to\s+)?(.+)$"
    r"|^\s*(?:告诉|通知|让)\s*([a-z][a-z0-9_-]{0,31})\s*[，,:：]?\s*(.+)$",
    re.IGNORECASE | re.DOTALL,
)

# A slug standing alone: "bob." at a sentence end counts, "notes.md" does not.
NAME_WORD_RE = re.compile(
    r"(?<![A-Za-z0-9_.-])([a-z][a-z0-9_-]{0,31})(?![A-Za-z0-9_-]|\.[A-Za-z0-9])"
)
NOT_NAMES = {
    "a", "an", "the", "and", "or", "then", "spawn", "start", "create", "tasks", "task",
    "board", "on", "watch", "them", "auto", "claim", "teammate", "teammates", "with", "let",
    "it", "find", "work", "from", "itself", "down", "shut", "stop", "please", "now", "to",
    "of", "two", "three", "new", "named", "called", "who", "by", "for", "plan", "approval",
    "she", "he", "they", "adds", "add", "line", "all", "everyone", "team", "too", "also",
    "md", "py", "txt", "after", "before", "creating", "making", "make", "some", "auto-claim",
    "autoclaim", "done", "finish", "complete", "up", "go", "see", "me", "us", "you",
}
SENTENCE_END_RE = re.compile(r"[.。!?！？;；](?:\s|$)|[。！？；]")
NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6,
}
MAX_TASKS = 6

SHUTDOWN_RE = re.compile(r"\bshut\s*(?:down|off)\b|\bstop\b|\bdismiss\b|关闭|关掉|停止|解散")
PLAN_RE = re.compile(r"\bplan\b|require_plan|计划|审批|方案")
VERIFY_RE = re.compile(r"expected(?:\.txt)?|期望|预期")
ABC_RE = re.compile(r"(?<![A-Za-z])A\s*[、,，和/ ]\s*B(?![A-Za-z]).*(?<![A-Za-z])C(?![A-Za-z])")
DEPS_RE = re.compile(r"depend|\bblock|\border\b|依赖|阻塞|顺序|先后")
CODER_RE = re.compile(r"\bcoder\b|程序员|find work|by itself|\bitself\b|自己找|自己从")
BOARD_RE = re.compile(
    r"\btasks?\b.*\b(?:spawn|start|launch)|\b(?:spawn|start|launch)\b.*\btasks?\b|auto-?claim"
    r"|任务.*(?:启动|召唤)|(?:启动|召唤).*任务|自动认领|认领"
)


@dataclass
class Intent:
    scenario: Scenario
    lang: str = "en"
    names: list[str] = field(default_factory=list)
    count: int = 3
    message: str = ""


def mentioned_names(text: str, after: re.Pattern[str] | None = None) -> list[str]:
    """Lowercase slugs in `text` that look like teammate names (after `after` if given)."""
    if after is not None:
        m = after.search(text)
        if m:
            text = SENTENCE_END_RE.split(text[m.end():], maxsplit=1)[0]
    names: list[str] = []
    for m in NAME_WORD_RE.finditer(text):
        word = m.group(1)
        if word not in NOT_NAMES and word not in NUMBER_WORDS and word not in names:
            names.append(word)
    return names


def task_count(text: str, default: int = 3) -> int:
    m = re.search(r"(\d+|one|two|three|four|five|six|[一两二三四五六])\s*(?:个)?\s*(?:new\s+)?"
                  r"(?:tasks?|任务)", text, re.IGNORECASE)
    if not m:
        return default
    raw = m.group(1).lower()
    n = int(raw) if raw.isdigit() else NUMBER_WORDS[raw]
    return max(1, min(n, MAX_TASKS))


def parse_intent(text: str) -> Intent:
    """Map a user prompt to one demo scenario; anything unrecognised is 'help'."""
    lang = language(text)
    low = text.lower()
    m = MESSAGE_RE.match(text)
    if m:
        name = (m.group(1) or m.group(3)).lower()
        body = (m.group(2) or m.group(4)).strip()
        if name not in NOT_NAMES and body:
            if SHUTDOWN_RE.search(body.lower()):
                return Intent("shutdown", lang, [name])
            return Intent("message", lang, [name], message=body)
    if SHUTDOWN_RE.search(low):
        names = mentioned_names(low, SHUTDOWN_RE)
        return Intent("shutdown", lang, names) if names else Intent("help", lang)
    if "main.py" in low and VERIFY_RE.search(low):
        return Intent("verify", lang, ["reader", "reviewer"])
    if PLAN_RE.search(low) and ("notes.md" in low or "writer" in low):
        names = [n for n in mentioned_names(low) if n not in {"notes"}]
        return Intent("plan", lang, names[:1] or ["writer"])
    if ABC_RE.search(text) or DEPS_RE.search(low):
        return Intent("abc", lang, _two_names(low))
    if CODER_RE.search(low):
        return Intent("coder", lang, ["coder"])
    if BOARD_RE.search(low):
        return Intent("board", lang, _two_names(low), task_count(low))
    return Intent("help", lang)


def _two_names(low: str) -> list[str]:
    spawn = re.compile(r"\bspawn\b|\bstart\b|\blaunch\b|启动|召唤")
    names = mentioned_names(low, spawn) if spawn.search(low) else []
    return names[:4] if names else ["alice", "bob"]


def help_text(lang: str = "en") -> str:
    prompts = "\n".join(f"  {i}. {p}" for i, p in enumerate(DEMO_PROMPTS + EXTRA_PROMPTS, 1))
    if lang == "zh":
        return (
            "(demo model) 我是离线演示模型，不是 Claude：我只认识下面这些演示指令（及相近说法），"
            "每一步都通过真实的工具调用完成。设置 ANTHROPIC_API_KEY 即可使用 Claude。\n"
            f"{prompts}"
        )
    return (
        "(demo model) I am the offline demo model, not Claude: I understand only the demo "
        "prompts below (and close variants), and I act only through real tool calls. "
        "Set ANTHROPIC_API_KEY to use Claude.\n"
        f"{prompts}"
    )
