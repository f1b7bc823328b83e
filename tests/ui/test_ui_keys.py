"""The prompt's keys, driven through prompt_toolkit's pipe input with the escape sequences a
terminal sends: Ctrl-R searches history, history auto-suggests (→ / Ctrl-E accept),
Esc+Enter / Alt+Enter insert a newline, a bracketed paste stays one message, Shift+Tab
cycles the permission mode."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from support.repl_harness import WAIT, Harness, make_runtime

from agent_cli.models.scripted import Reply

CTRL_R = "\x12"
CTRL_E = "\x05"
RIGHT = "\x1b[C"
ESC_ENTER = "\x1b\r"  # what Esc then Enter sends; Alt+Enter sends the same bytes
SHIFT_TAB = "\x1b[Z"
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


@pytest.fixture
def harness(workdir: Path):
    rt, model = make_runtime(workdir, {"lead": [Reply("Got it.")] * 3})
    h = Harness(rt).start()
    h.model = model
    yield h
    h.quit()
    rt.close(2.0)


def wait_for_buffer(h: Harness, text: str) -> None:
    """Wait until the prompt's buffer holds `text` (keys are handled on the REPL's thread)."""
    buf = h.repl.session.default_buffer
    there = threading.Event()

    def check(_buffer: object = None) -> None:
        if buf.text == text:
            there.set()

    buf.on_text_changed += check
    try:
        check()
        assert there.wait(WAIT), f"the prompt holds {buf.text!r}, not {text!r}"
    finally:
        buf.on_text_changed -= check


def sent_to_lead(h: Harness) -> list[str]:
    """The user text of each lead request (the text after any injected block)."""
    return [r.messages[-1].text() for r in h.model.requests]


def test_ctrl_r_finds_an_earlier_line_and_enter_runs_it(harness: Harness) -> None:
    harness.command("!echo first-marker", "first-marker")
    harness.command("!echo second-marker", "second-marker")
    before = harness.screen.text.count("first-marker")
    harness.send(CTRL_R)
    harness.send("first")
    harness.send("\r")  # leaves the search with the found line in the prompt
    wait_for_buffer(harness, "!echo first-marker")
    harness.send("\r")
    harness.screen.wait_for("first-marker", count=before + 2)  # the command line + its output
    assert "second-marker" not in harness.screen.text[-40:]


def test_ctrl_c_abandons_the_search_and_the_prompt_works_on(harness: Harness) -> None:
    harness.command("!echo old-marker", "old-marker")
    harness.send(CTRL_R + "old\x03")
    harness.type_into_prompt("hello lead")
    harness.command("", "Got it.")
    assert len(sent_to_lead(harness)) == 1 and sent_to_lead(harness)[0].endswith("hello lead")


def test_esc_takes_the_found_line_into_the_prompt_like_readline(harness: Harness) -> None:
    harness.command("!echo old-marker", "old-marker")
    harness.send(CTRL_R + "old\x1b")
    wait_for_buffer(harness, "!echo old-marker")
    before = harness.screen.text.count("old-marker")
    harness.send("\r")
    harness.screen.wait_for("old-marker", count=before + 2)


@pytest.mark.parametrize("accept", [RIGHT, CTRL_E], ids=["right-arrow", "ctrl-e"])
def test_history_suggests_the_rest_of_a_line_and_a_key_accepts_it(
    harness: Harness, accept: str
) -> None:
    harness.command("!echo suggested-line-9", "suggested-line-9")
    buf = harness.repl.session.default_buffer
    shown = threading.Event()

    def suggested(_buffer: object) -> None:
        if buf.suggestion is not None and buf.suggestion.text == "ested-line-9":
            shown.set()

    buf.on_suggestion_set += suggested  # suggestions are computed in the background
    harness.type_into_prompt("!echo sugg")
    assert shown.wait(WAIT), "history never suggested the rest of the line"
    harness.send(accept)
    wait_for_buffer(harness, "!echo suggested-line-9")
    harness.send("\r")
    before = harness.screen.text.count("suggested-line-9")
    harness.screen.wait_for("suggested-line-9", count=before + 1)
    assert buf.text == ""


@pytest.mark.parametrize("newline", [ESC_ENTER], ids=["esc-enter/alt-enter"])
def test_esc_enter_inserts_a_newline_and_the_message_goes_as_one(
    harness: Harness, newline: str
) -> None:
    harness.type_into_prompt("line one")
    harness.send(newline + "line two")
    wait_for_buffer(harness, "line one\nline two")
    harness.command("", "Got it.")
    assert len(harness.model.requests) == 1
    assert sent_to_lead(harness)[0].endswith("line one\nline two")


def test_a_bracketed_paste_of_several_lines_stays_one_message(harness: Harness) -> None:
    harness.send(f"{PASTE_START}line1\nline2\nline3{PASTE_END}")
    wait_for_buffer(harness, "line1\nline2\nline3")
    harness.command("", "Got it.")
    assert len(harness.model.requests) == 1
    assert sent_to_lead(harness)[0].endswith("line1\nline2\nline3")


def test_shift_tab_cycles_the_permission_mode_and_the_toolbar_shows_it(harness: Harness) -> None:
    policy = harness.rt.policy
    seen = []
    for _ in range(3):
        harness.send(SHIFT_TAB)
        harness.command("!echo mode-checked", "mode-checked")  # keys are handled in order
        seen.append(policy.mode)
        toolbar = "".join(text for _, text in harness.repl._toolbar())
        assert policy.mode in toolbar
    assert seen == ["acceptEdits", "plan", "default"]
    assert harness.model.requests == []
