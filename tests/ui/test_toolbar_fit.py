"""The toolbar at any width keeps what a user steers by: the task counts and the lead's
inbox. Teammates give way first (shorter words, then marks only, then a count such as
"6 teammates: 2 working"), then the token count and the model name."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from prompt_toolkit.formatted_text import fragment_list_width

from agent_cli.ui.toolbar import Counts, StatusSnapshot, toolbar_fragments

NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan"]


def snapshot(mates: int, **extra) -> StatusSnapshot:
    members = [SimpleNamespace(name=name, status="working" if i < 2 else "idle",
                               current_task=10 + i if i < 2 else None)
               for i, name in enumerate(NAMES[:mates])]
    return StatusSnapshot(members=members, counts=Counts(done=3, in_progress=2, pending=4),
                          lead_unread=3, **extra)


def shown(snap: StatusSnapshot, width: int, model: str = "demo",
          mode: str = "default") -> tuple[str, int]:
    frags = toolbar_fragments(snap, model, mode, 48_200, width=width)
    return "".join(text for _, text in frags), fragment_list_width(frags)


@pytest.mark.parametrize("width", [200, 160, 120, 100, 80, 70])
@pytest.mark.parametrize("mates", [1, 5, 6, 9])
def test_the_task_counts_and_the_inbox_always_fit(mates: int, width: int) -> None:
    text, used = shown(snapshot(mates), width)
    assert used <= width, text
    assert "tasks 3/9 done" in text or "tasks 3 done · 2 in progress · 4 pending" in text
    assert "✉ 3" in text


def test_teammates_collapse_to_a_count_only_when_they_do_not_fit() -> None:
    wide, _ = shown(snapshot(6), 300)
    assert "alice ▶ #10" in wide and "frank ⏸ idle" in wide and "48.2k tokens" in wide
    text, _ = shown(snapshot(6), 100, model="claude-sonnet-4-5")
    assert "6 teammates: 2 working" in text and "alice" not in text
    assert "claude-sonnet-4-5" in text and text.rstrip().endswith("48.2k")
    marks, _ = shown(snapshot(6), 120, model="claude-sonnet-4-5")
    assert "alice ▶" in marks and "frank ⏸" in marks  # six names still fit as marks


def test_failures_retries_and_bypass_stay_visible_in_the_count() -> None:
    snap = snapshot(6, retries={"bob": "retrying in 4 s (overloaded)"})
    snap.members[5].status = "failed"
    text, used = shown(snap, 80, mode="bypassPermissions")
    assert used > 80  # too much to say in 80 columns: the teammates are what gets cut
    assert "⚠ bypassPermissions" in text and "tasks 3/9 done │ ✉ 3" in text
    assert "6 teammates: 2 working, 1 failed" in text  # last: the terminal cuts the rest
    text, used = shown(snap, 100, mode="bypassPermissions")
    assert used <= 100 and "6 teammates: 2 working, 1 failed, 1 retrying  │ tasks" in text
