"""Shell commands that try to ride on an allow rule: `;`, `&&`, `||`, `|`, `&`, `$()`,
backticks, newlines, `env X=1 cmd`, `X=1 cmd`, redirections, process substitution.

An allow rule names one simple command; anything more must go to the human. Here no human
is attached (headless), so every such command is denied -- and the file its payload would
have created never appears. A control shows the allowed command itself does run, so the
test would fail if the gate simply denied everything.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_cli.agent.tool_calls import ToolRunner
from agent_cli.models.base import ToolUseBlock
from agent_cli.permissions.shell_analysis import analyze as parse_command
from agent_cli.runtime import Runtime, RuntimeConfig
from agent_cli.tools.base import ToolContext, ToolSet
from agent_cli.tools.workspace import workspace_tools

ALLOW = ["Bash(echo *)", "Bash(ls)", "Bash(git status)", "Bash(true)"]
BYPASSES = [
    "echo hi; touch pwned",
    "echo hi;touch pwned",
    "echo hi && touch pwned",
    "echo hi || touch pwned",
    "false || touch pwned",
    "echo hi | tee pwned",
    "echo hi & touch pwned",
    "echo $(touch pwned)",
    "echo `touch pwned`",
    'echo "$(touch pwned)"',
    'echo "`touch pwned`"',
    "echo hi\ntouch pwned",
    "echo hi\rtouch pwned",
    "echo hi > pwned",
    "echo hi >> pwned",
    "echo hi 2> pwned",
    "echo hi &> pwned",
    "echo hi >| pwned",
    "echo <(touch pwned)",
    "echo >(touch pwned)",
    "env X=1 touch pwned",
    "X=1 touch pwned",
    "env touch pwned",
    "ls; touch pwned",
    "ls && touch pwned",
    "git status; touch pwned",
    "git status --output=pwned && touch pwned",
    "true && bash -c 'touch pwned'",
    "(touch pwned)",
    "{ touch pwned; }",
    "echo ${IFS}; touch pwned",
    "echo hi # ; \ntouch pwned",
]


@pytest.fixture
def shell(workdir):
    rt = Runtime.open(workdir, RuntimeConfig(allow=ALLOW))
    runner = ToolRunner("alice", ToolSet(workspace_tools()), rt.gate, lambda e: None,
                        lambda: ToolContext("alice", workdir))

    def run(command: str):
        return runner.run_one(ToolUseBlock(id="t", name="shell", input={"command": command}))

    return run, rt


def test_the_allowed_commands_themselves_run(shell, workdir):
    run, _ = shell
    out = run("echo allowed words")
    assert not out.is_error and "allowed words" in out.content
    assert not run("ls").is_error


@pytest.mark.parametrize("command", BYPASSES)
def test_a_compound_command_never_rides_on_an_allow_rule(shell, workdir, command):
    run, rt = shell
    rules_before = [r.rule for r in rt.policy.rules()]
    out = run(command)
    assert out.is_error and "Denied" in out.content, out.content
    assert not (workdir / "pwned").exists()
    assert [r.rule for r in rt.policy.rules()] == rules_before  # nothing granted
    last = rt.audit.entries()[-1]
    assert (last["decision"], last["source"]) == ("deny", "headless")


def test_a_line_continuation_joins_words_so_echo_prints_them(shell, workdir):
    run, _ = shell
    out = run("echo hi \\\ntouch pwned")  # bash reads `echo hi touch pwned`: one echo
    assert not out.is_error and "hi touch pwned" in out.content
    assert not (workdir / "pwned").exists()


def test_a_deny_rule_wins_inside_a_compound_command_even_with_all_of_bash_allowed(workdir):
    rt = Runtime.open(workdir, RuntimeConfig(allow=["Bash"], deny=["Bash(rm *)"]))
    runner = ToolRunner("alice", ToolSet(workspace_tools()), rt.gate, lambda e: None,
                        lambda: ToolContext("alice", workdir))
    (workdir / "keep.txt").write_text("data")
    for command in ("echo x && rm keep.txt", "echo $(rm keep.txt)", "true; sudo rm keep.txt",
                    "bash -c 'rm keep.txt'", "env A=1 rm keep.txt", "/bin/rm keep.txt"):
        out = runner.run_one(ToolUseBlock(id="t", name="shell", input={"command": command}))
        assert out.is_error and "Denied by rule Bash(rm *)" in out.content, command
    assert (workdir / "keep.txt").read_text() == "data"


OPERATORS = [";", "&&", "||", "|", "&", "\n", "$(", "`", ">", "<", ">>", "2>", "<(", "$X"]
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=8)


@settings(max_examples=150, deadline=None)
@given(before=st.lists(words, max_size=3), op=st.sampled_from(OPERATORS),
       after=st.lists(words, min_size=1, max_size=3))
def test_no_unquoted_operator_leaves_a_command_simple(before, op, after):
    command = " ".join(["echo", *before]) + f" {op} " + " ".join(after)
    parsed = parse_command(command)
    assert not parsed.simple, command
