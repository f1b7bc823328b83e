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


HINTS_EN = {
    "board": "Teammates {names} now claim these tasks by themselves, one at a time. Approve "
    "their commands and writes with 1 (yes), 2 (yes, always) or 3 (no); /tasks shows the "
    "board, /team who holds what.",
    "coder": "coder finds the first task on the board by itself, then the second once the first "
    "is done. Approve its write and its command with 1/2/3; watch with /tasks and /team.",
    "abc": "{names} claim A and B in parallel; C stays blocked until both are completed, then "
    "exactly one of them claims it. Approve the writes with 1/2/3; /tasks shows the order.",
    "verify": "reader and reviewer claim source and expected; verify waits for both. The host "
    "runs `python main.py` through the approval gate and completes verify only if the output "
    "matches expected.txt.",
    "plan": "The task is assigned to writer and requires a plan, so no other teammate can take "
    "it. writer claims it and submits a plan for it first; when it reaches my inbox I review it "
    "at once (a lead turn starts by itself). The write to NOTES.md still asks you: 1/2/3.",
    "shutdown": "{names} answer after the current step, release any task they hold and stop; "
    "/team shows them as shutdown.",
    "message": "{names} wake up at once with the message and go on with the tasks they hold.",
}

HINTS_ZH = {
    "board": "{names} 会自己从看板认领任务。审批命令和写文件时按 1（允许）、2（总是允许）或 3"
    "（拒绝）；/tasks 查看看板，/team 查看谁在做什么。",
    "coder": "coder 会自己在看板上找到第一个任务，完成后再认领第二个。"
    "用 1/2/3 审批；/tasks、/team 观察。",
    "abc": "{names} 会并行认领 A 和 B；C 在两者完成之前一直被阻塞，之后由其中一人认领。"
    "用 1/2/3 审批写文件；/tasks 可以看到顺序。",
    "verify": "reader 和 reviewer 认领 source 与 expected；verify 等两者完成。宿主经审批运行 "
    "`python main.py`，输出与 expected.txt 一致才会完成 verify。",
    "plan": "任务指派给了 writer 并要求先提交计划，其他队友不能认领。writer 认领后先为它提交计划；"
    "计划一到我的收件箱，我就自动开始一轮来审批。写 NOTES.md 仍然要你按 1/2/3 确认。",
    "shutdown": "{names} 会在当前步骤结束后答复、释放手上的任务并停止；/team 显示为 shutdown。",
    "message": "{names} 收到消息后立即醒来，继续手上的任务。",
}


# English hints for a single name (the ones above read right for two or more).
HINTS_EN_ONE = {
    "shutdown": "{names} answers after the current step, releases any task it holds and stops; "
    "/team shows it as shutdown.",
    "message": "{names} wakes up at once with the message and goes on with the task it holds.",
}


def closing_hint(scenario: str, lang: str, names: list[str]) -> str:
    table = HINTS_ZH if lang == "zh" else HINTS_EN
    if lang != "zh" and len(names) == 1:
        table = {**table, **HINTS_EN_ONE}
    text = table.get(scenario, "")
    return text.format(names=" 和 ".join(names) if lang == "zh" else " and ".join(names))
