"""The demo lead's prompt understanding: the README prompts, close variants, and help."""

from __future__ import annotations

import pytest

from agent_cli.models.demo.intents import DEMO_PROMPTS, help_text, parse_intent


@pytest.mark.parametrize(
    ("prompt", "scenario", "names"),
    [
        ("Create 3 tasks on the board, then spawn alice and bob. Watch them auto-claim.",
         "board", ["alice", "bob"]),
        ("Spawn a coder teammate and let it find work from the task board itself.",
         "coder", ["coder"]),
        ("Create tasks with dependencies. Watch teammates respect the blocked order.",
         "abc", ["alice", "bob"]),
        ("创建 A、B 和依赖二者的 C，再启动 alice、bob 自主认领并完成", "abc", ["alice", "bob"]),
        ("Check whether main.py's output matches expected.txt", "verify",
         ["reader", "reviewer"]),
        ("Spawn writer with plan approval: she adds a line to NOTES.md", "plan", ["writer"]),
        ("Shut down alice", "shutdown", ["alice"]),
        ("关闭 alice", "shutdown", ["alice"]),
    ],
)
def test_readme_prompts_map_to_their_scenario(prompt, scenario, names):
    intent = parse_intent(prompt)
    assert (intent.scenario, intent.names) == (scenario, names)


@pytest.mark.parametrize(
    ("prompt", "scenario", "names"),
    [
        ("please create two tasks and then start carol and dave", "board", ["carol", "dave"]),
        ("Spawn alice, bob and carol after creating 4 tasks", "board",
         ["alice", "bob", "carol"]),
        ("在看板上创建 4 个任务，然后启动 carol 和 dave", "board", ["carol", "dave"]),
        ("启动一个 coder 队友，让它自己从看板找活", "coder", ["coder"]),
        ("make some tasks that depend on each other, then start erin and frank", "abc",
         ["erin", "frank"]),
        ("创建有依赖的任务，看队友按阻塞顺序执行", "abc", ["alice", "bob"]),
        ("does main.py print what expected.txt says?", "verify", ["reader", "reviewer"]),
        ("检查 main.py 的输出是否与 expected.txt 一致", "verify", ["reader", "reviewer"]),
        ("启动需要计划审批的 writer：她在 NOTES.md 里加一行", "plan", ["writer"]),
        ("shut down bob and carol", "shutdown", ["bob", "carol"]),
        ("关掉 bob", "shutdown", ["bob"]),
    ],
)
def test_close_variants_in_english_and_chinese(prompt, scenario, names):
    intent = parse_intent(prompt)
    assert (intent.scenario, intent.names) == (scenario, names)


def test_task_count_is_read_and_capped():
    assert parse_intent("create 5 tasks then spawn alice and bob").count == 5
    assert parse_intent("create two tasks then spawn alice").count == 2
    assert parse_intent("创建 四 个任务，然后启动 alice").count == 4
    assert parse_intent("create 40 tasks then spawn alice").count == 6


def test_the_language_follows_the_prompt():
    assert parse_intent("关闭 alice").lang == "zh"
    assert parse_intent("Shut down alice").lang == "en"


@pytest.mark.parametrize("prompt", ["what can you do?", "refactor my code", "你好", "shut down"])
def test_anything_else_is_help(prompt):
    assert parse_intent(prompt).scenario == "help"


def test_help_lists_every_demo_prompt_and_says_it_is_a_demo():
    for lang in ("en", "zh"):
        text = help_text(lang)
        assert text.startswith("(demo model)")
        assert "ANTHROPIC_API_KEY" in text
        for prompt in DEMO_PROMPTS:
            assert prompt in text


@pytest.mark.parametrize(
    ("prompt", "scenario", "names", "message"),
    [
        ("Tell writer to retry", "message", ["writer"], "retry"),
        ("告诉 writer：再试一次", "message", ["writer"], "再试一次"),
        ("ask alice to shut down", "shutdown", ["alice"], ""),
        ("tell me what you can do", "help", [], ""),
    ],
)
def test_messages_to_one_teammate(prompt, scenario, names, message):
    intent = parse_intent(prompt)
    assert (intent.scenario, intent.names, intent.message) == (scenario, names, message)
