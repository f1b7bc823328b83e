"""The words of the demo scenarios: the tasks the demo lead puts on the board, the files a
scenario needs, and the closing hints (what to watch, which keys to press).

Task descriptions follow the convention the demo teammate reads: a command to run is in
backticks, a file to write is named after "Write"/"Create"/"Add the line", its content is in
double quotes or in a fenced block, and any other file named is read.
"""

from __future__ import annotations

MAIN_PY = "print(42)\n"
FENCE = "`" * 3


def expected_txt() -> str:
    return "42\n"


BOARD_TASKS: tuple[tuple[str, str], ...] = (
    ("Survey the workspace", "List the files in the workdir and report how many there are."),
    ("Write hello.txt", 'Write hello.txt containing "Hello from the team."'),
    ("Check the Python version", "Run `python --version` and report what it prints."),
)


def board_tasks(count: int) -> list[tuple[str, str]]:
    tasks = list(BOARD_TASKS[:count])
    for k in range(len(tasks) + 1, count + 1):
        tasks.append((f"Write note_{k}.txt", f'Write note_{k}.txt containing "Note {k}."'))
    return tasks


FIZZBUZZ = (
    "for i in range(1, 16):\n"
    "    print('FizzBuzz' if i % 15 == 0 else 'Fizz' if i % 3 == 0 "
    "else 'Buzz' if i % 5 == 0 else i)\n"
)

CODER_TASKS: tuple[tuple[str, str], ...] = (
    ("Write fizzbuzz.py", f"Write fizzbuzz.py containing:\n{FENCE}python\n{FIZZBUZZ}{FENCE}"),
    ("Run fizzbuzz.py", "Run `python fizzbuzz.py` and report its last line."),
)

ABC_TASKS: tuple[tuple[str, str], ...] = (
    ("A: write part_a.txt", 'Write part_a.txt containing "A is done."'),
    ("B: write part_b.txt", 'Write part_b.txt containing "B is done."'),
    ("C: combine A and B", "Read part_a.txt and part_b.txt and report both lines. "
     "It can only start once A and B are completed."),
)

PLAN_TASK = (
    "Add a line to NOTES.md",
    'Add the line "Reviewed by the team." to NOTES.md (it is created if absent).',
)


def verify_tasks() -> tuple[tuple[str, str], tuple[str, str], tuple[str, str]]:
    return (
        ("source", "Read main.py and report what it prints."),
        ("expected", "Read expected.txt and report the expected output."),
        ("verify", "Run `python main.py` and compare what it prints with expected.txt. "
         "The host re-runs it (verify) and completes the task only if they match."),
    )


# Who the scenarios' tasks are for (the role their teammates are spawned with), so a teammate
# idle from an earlier prompt cannot take them and each walkthrough holds in one session.
GENERALIST = "generalist"  # alice and bob: prompts 1, 3 and 4
CODER = "coder"  # prompt 2
CHECKER = "checker"  # reader and reviewer: prompt 5

# The closing text's words (closing.py fills them from the tool results; none names a
# teammate the results do not name).
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "did": "What I did (tool results as returned):",
        "failed": "Some steps failed or were denied (see above); what depends on them was not "
        "done.",
        "board": "On the board now (list_tasks):",
        "listed": "{count} tasks on the board",
        "team_listed": "{count} teammates in the roster",
        "in_progress": "in progress",
        "pending": "pending",
        "completed": "completed",
        "blocked": "blocked by {ids}",
        "role": "Only a teammate with role {role} may take {ids}: here that is {who}.",
        "role_nobody": "Only a teammate with role {role} may take {ids}; none was started or "
        "found in this turn.",
        "assignee": "Only {name} may take {ids}.",
        "assignee_plan": "Only {name} may take {ids}, and only with a plan for it approved "
        "first (I review it when it reaches my inbox).",
        "anyone": "Any idle teammate may take {ids}.",
        "waits": "{id} waits until {ids} {be} completed.",
        "verify": "{id} is completed only if the host's check passes: `{command}` must print "
        "{expected}.",
        "expected_file": "what {path} holds",
        "started": "Started now: {names}.",
        "running": "Already running: {names}.",
        "repl": "Approve their commands and writes with 1 (yes), 2 (yes, always) or 3 (no); "
        "/tasks shows the board, /team who holds what.",
        "headless": "This run is headless: no one approves, so a command or write that no "
        "rule allows is denied. To let it run, pass --allow 'RULE' next time (each denial names "
        "its rule), or --permission-mode acceptEdits for file writes.",
        "shutdown": "Shutdown requested: {names}. Each answers after its current step, "
        "releases any task it holds and stops.",
        "shutdown_repl": "/team shows who has shut down.",
        "message": "Message sent to {names}: it wakes a waiting teammate at once.",
        "and": " and ",
        "comma": ", ",
    },
    "zh": {
        "did": "我实际做了这些：",
        "failed": "有步骤失败或被拒绝（见上），依赖它们的步骤没有做。",
        "board": "看板现状（list_tasks）：",
        "listed": "看板上共 {count} 个任务",
        "team_listed": "名册上共 {count} 个队友",
        "in_progress": "进行中",
        "pending": "待认领",
        "completed": "已完成",
        "blocked": "被 {ids} 阻塞",
        "role": "只有角色为 {role} 的队友能认领 {ids}：这里是 {who}。",
        "role_nobody": "只有角色为 {role} 的队友能认领 {ids}；这一轮没有启动或找到这样的队友。",
        "assignee": "只有 {name} 能认领 {ids}。",
        "assignee_plan": "只有 {name} 能认领 {ids}，而且要先为它提交计划并获批准"
        "（计划到了我的收件箱我就审批）。",
        "anyone": "任何空闲队友都可以认领 {ids}。",
        "waits": "{id} 要等 {ids} 完成。",
        "verify": "只有宿主的检查通过，{id} 才算完成：`{command}` 的输出必须是{expected}。",
        "expected_file": " {path} 里的内容",
        "started": "刚启动：{names}。",
        "running": "已在运行：{names}。",
        "repl": "审批命令和写文件时按 1（允许）、2（总是允许）或 3（拒绝）；"
        "/tasks 查看看板，/team 查看谁在做什么。",
        "headless": "这是无人值守（headless）运行：没有人审批，规则不允许的命令和写文件都会被拒绝。"
        "要放行，下次运行时加 --allow 'RULE'（每条拒绝都写明了规则），写文件也可以用 "
        "--permission-mode acceptEdits。",
        "shutdown": "已请求关闭：{names}。每人在当前步骤结束后答复、释放手上的任务并停止。",
        "shutdown_repl": "/team 会显示谁已关闭。",
        "message": "已发消息给 {names}：等待中的队友会立即醒来。",
        "and": "、",
        "comma": "，",
    },
}


def words(lang: str) -> dict[str, str]:
    return WORDS["zh" if lang == "zh" else "en"]
