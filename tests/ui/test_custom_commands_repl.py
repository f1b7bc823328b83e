"""Custom commands in the REPL: listed by /help and tab completion with their descriptions,
run as a lead turn, their snippets asking the human first; a built-in keeps its name."""

from __future__ import annotations

from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from support.claude_user import write
from support.repl_harness import WAIT, Harness, make_runtime

from agent_cli.models.scripted import Reply


@pytest.fixture
def harness(workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "home" / ".claude"))
    write(workdir / ".claude/commands/review.md",
          "---\ndescription: Review for a concern\nargument-hint: [concern]\n---\n"
          "Review for $ARGUMENTS.\nMade: !`touch made.txt`\n")
    write(workdir / ".claude/commands/tasks.md", "Not the board.\n")
    write(tmp_path / "home/.claude/commands/frontend/component.md",
          "---\ndescription: New component\n---\nCreate component $1.\n")
    rt, model = make_runtime(workdir, {"lead": [Reply("Reviewed."), Reply("Created.")]})
    h = Harness(rt)
    h.model = model
    h.start()
    yield h
    assert h.repl.lead.wait_idle(WAIT)  # the lead's last redraw happens before the exit
    h.quit()
    rt.close(2.0)


def test_help_lists_them_and_a_builtin_keeps_its_name(harness: Harness) -> None:
    harness.command("/help", "Custom commands")
    out = harness.screen.wait_for("/frontend:component")
    assert "/review [concern]" in out and "Review for a concern" in out
    assert "New component (user: ~/.claude/commands/frontend/component.md)" in out
    assert "hidden: the built-in /tasks wins over" in out
    assert harness.model.requests == []


def test_tab_completion_offers_them_with_descriptions(harness: Harness) -> None:
    completer = harness.repl.session.completer
    found = {c.text: c.display_meta_text
             for c in completer.get_completions(Document("/"), CompleteEvent())}
    assert found["/review"] == "[concern] Review for a concern"
    assert found["/frontend:component"] == "New component"
    assert found["/tasks"] != "Not the board."


def test_a_command_runs_as_a_lead_turn_after_its_snippet_is_approved(
        harness: Harness, workdir: Path) -> None:
    harness.send("/review security\r")
    harness.screen.wait_for("lead wants to run `touch made.txt` — /review")
    assert harness.model.requests == []  # nothing is sent before the snippet is answered
    harness.send("1")
    harness.screen.wait_for("Reviewed.")
    assert (workdir / "made.txt").exists()
    sent = harness.model.requests[-1].messages[-1].text()
    assert sent.startswith("Review for security.\nMade: \n<command-output command=")


def test_a_denied_snippet_is_not_run_and_the_turn_still_goes(harness: Harness,
                                                             workdir: Path) -> None:
    harness.send("/review speed\r")
    harness.screen.wait_for("lead wants to run `touch made.txt`")
    harness.send("3\r")
    harness.screen.wait_for("Reviewed.", timeout=WAIT)
    assert not (workdir / "made.txt").exists()
    assert "(not run: " in harness.model.requests[-1].messages[-1].text()


def test_a_users_namespaced_command_fills_its_arguments(harness: Harness) -> None:
    harness.send("/frontend:component Button\r")
    harness.screen.wait_for("Reviewed.")
    assert harness.model.requests[-1].messages[-1].text() == "Create component Button."


def test_escape_during_a_snippet_sends_nothing(workdir: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from agent_cli.app import open_runtime
    from agent_cli.events import ToolStarted
    from agent_cli.models.scripted import ScriptedModel
    from agent_cli.runtime import RuntimeConfig

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    write(workdir / ".claude/commands/slow.md", "Status: !`sleep 60`\n")
    model = ScriptedModel({"lead": [Reply("Next turn.")]})
    rt = open_runtime(workdir, RuntimeConfig(model_factory=lambda agent, spec: model,
                                             idle_timeout_s=0, allow=["Bash(sleep 60)"]))
    started = threading.Event()
    rt.events.subscribe(lambda e: started.set() if isinstance(e, ToolStarted) else None)
    h = Harness(rt).start()
    try:
        h.send("/slow\r")
        assert started.wait(WAIT)
        h.send("\x1b")
        assert h.repl.lead.wait_idle(WAIT), "the snippet did not stop"
        h.screen.wait_for("/slow: interrupted; nothing was sent to the model")
        assert model.requests == []
        h.command("go on", "Next turn.")
    finally:
        h.quit()
        rt.close(2.0)
