"""What a headless denial tells its reader: the reason whole (a line too long is shortened at
a word and ends with "…", never cut mid-word), and what a headless user can do about it."""

from __future__ import annotations

from types import SimpleNamespace

from agent_cli.shorten import shorten
from agent_cli.team.tracking import MAX_DENIAL_CHARS, Tracking
from agent_cli.ui.headless_listeners import what_to_do


def test_a_line_that_fits_is_kept_and_a_longer_one_ends_at_a_word_with_an_ellipsis():
    assert shorten("no human to approve in headless mode", 40) == (
        "no human to approve in headless mode")
    assert shorten("no human to approve in headless mode", 30) == "no human to approve in…"
    assert shorten("Supercalifragilistic", 8) == "Superca…"  # one long word: cut, but said
    for limit in range(2, 36):
        short = shorten("no human to approve in headless mode", limit)
        assert len(short) <= limit and short.endswith("…")


def test_headless_advice_names_the_rule_and_for_a_write_accept_edits():
    assert what_to_do("shell", "Bash(python --version)") == (
        "To let it run, rerun with --allow 'Bash(python --version)'.")
    assert what_to_do("write_file", "Write(hello.txt)") == (
        "To let it run, rerun with --allow 'Write(hello.txt)' or "
        "--permission-mode acceptEdits.")
    assert what_to_do("shell", "") == "To let it run, rerun with an --allow rule that matches it."


def _tracking() -> Tracking:
    state = SimpleNamespace(denial="", stalls=None)
    tracking = Tracking.__new__(Tracking)
    tracking.state = state
    tracking.plan_block = lambda: None
    return tracking


def test_a_denial_reason_is_kept_whole_or_shortened_with_an_ellipsis():
    tracking = _tracking()
    tool = SimpleNamespace(name="shell")
    message = ("Denied: no human was available to approve this shell command (make test); "
               "this run is headless. To let it run, rerun with --allow 'Bash(make test)'.")
    tracking.note_denial(tool, SimpleNamespace(source="headless", message=message))
    assert tracking.state.denial == f"shell run was denied ({message.removeprefix('Denied: ')})"
    long = "Denied: " + " ".join(["word"] * 200)
    tracking.note_denial(tool, SimpleNamespace(source="headless", message=long))
    reason = tracking.state.denial.removeprefix("shell run was denied (").removesuffix(")")
    assert reason.endswith("word…") and len(reason) <= MAX_DENIAL_CHARS
