"""The system prompts Claude gets are consistent with the host they describe: every tool and
input field they name exists for that agent, every tag the host injects is explained to the
agent that receives it, the placeholders are filled, and nothing in the teammate prompt makes
the offline demo think a plan is required."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent_cli.app import open_runtime
from agent_cli.board.models import Verify
from agent_cli.models.demo.teammate import SYSTEM_PLAN_RE
from agent_cli.prompts import load_prompt
from agent_cli.team.mailbox import MSG_TYPES
from agent_cli.team.team_tools import lead_tools, teammate_tools
from agent_cli.team.teammate import render_prompt
from agent_cli.tools.workspace import workspace_tools

SNAKE = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")
CALL = re.compile(r"\b([a-z]+(?:_[a-z]+)+)\(([^)]*)\)")
OTHER_WORDS = {"in_progress", "request_id"}  # a task status, a tag attribute


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    rt = open_runtime(tmp_path_factory.mktemp("prompts"))
    yield rt.team
    rt.close()


def tools_of(agent: str, team) -> dict[str, type[BaseModel]]:
    tools = (lead_tools(team) if agent == "lead" else teammate_tools(team)) + workspace_tools()
    return {t.name: t.input_model for t in tools}


def vocabulary(team) -> set[str]:
    """Every word a prompt may name: tools and input fields of either side, message types."""
    words = set(MSG_TYPES) | OTHER_WORDS | set(Verify.model_fields)
    for agent in ("lead", "teammate"):
        for name, model in tools_of(agent, team).items():
            words |= {name, *model.model_fields}
    return words


def rendered(agent: str, workdir: Path) -> str:
    if agent == "lead":
        return render_prompt("lead", name="lead", role="lead", team="default", workdir=workdir)
    return render_prompt("teammate", name="alice", role="tester", team="default", workdir=workdir)


@pytest.mark.parametrize("agent", ["lead", "teammate"])
def test_every_tool_and_field_a_prompt_names_exists_for_that_agent(agent, team):
    text = load_prompt(agent)
    tools = tools_of(agent, team)
    unknown = set(SNAKE.findall(text)) - vocabulary(team)
    assert not unknown, f"prompts/{agent}.md names what the host does not have: {unknown}"
    for name, args in CALL.findall(text):
        assert name in tools, f"{name}(...) is not a {agent} tool"
        fields = set(tools[name].model_fields)
        named = {a.strip() for a in args.split(",") if a.strip()}
        assert named <= fields, f"{name}({args}): {named - fields} are not its input fields"


def test_each_agent_is_told_about_its_own_tools():
    lead, mate = load_prompt("lead"), load_prompt("teammate")
    for tool in (
        "create_task",
        "update_task",
        "spawn_teammate",
        "list_teammates",
        "send_message",
        "broadcast",
        "request_shutdown",
        "review_plan",
        "list_tasks",
    ):
        assert tool in lead
    for tool in (
        "complete_task",
        "claim_task",
        "submit_plan",
        "send_message",
        "idle",
        "get_task",
        "shell",
    ):
        assert tool in mate
    assert "claim_task" not in lead  # the lead never claims


def test_each_injected_tag_is_explained_to_the_agent_that_receives_it():
    lead, mate = load_prompt("lead"), load_prompt("teammate")
    for tag in ("<inbox>", "<message ", "<summary>", "<identity>"):
        assert tag in lead
    for tag in ("<auto-claimed-task ", "<message ", "<plan-review ", "<summary>", "<identity>"):
        assert tag in mate
    compact = load_prompt("compact")
    for tag in ("<conversation>", "<auto-claimed-task>", "<inbox>", "<plan-review>"):
        assert tag in compact


@pytest.mark.parametrize("agent", ["lead", "teammate"])
def test_placeholders_are_filled(agent, workdir):
    text = rendered(agent, workdir)
    assert "$" not in text
    assert str(workdir) in text.splitlines()[0]
    if agent == "teammate":
        assert text.startswith('You are alice, a teammate with the role "tester"')


def test_the_teammate_prompt_does_not_ask_every_teammate_for_a_plan(workdir):
    # the demo teammate plans first when its system prompt demands it; a general prompt
    # that only explains plans must not trigger that for every teammate
    assert SYSTEM_PLAN_RE.search(rendered("teammate", workdir)) is None


def test_prompts_stay_short():
    for name in ("lead", "teammate", "compact"):
        assert len(load_prompt(name).splitlines()) <= 80, name
