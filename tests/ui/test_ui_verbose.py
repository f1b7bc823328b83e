"""/verbose streams teammates' text: each teammate's deltas are buffered apart and printed one
completed line at a time (prefixed with its name), the rest when its message ends; lines of
two teammates streaming at once never mix, and without /verbose none of it is printed."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest
from support.repl_harness import WAIT, Harness, Screen, make_runtime

from agent_cli.events import TextDeltaEvent, TextDone, TurnFinished
from agent_cli.models.scripted import Reply
from agent_cli.ui.printer import Printer
from agent_cli.ui.render import EventView, UiSettings


def view(verbose: bool = True) -> tuple[EventView, Screen]:
    screen = Screen()
    return EventView(Printer(screen), UiSettings(verbose=verbose), lambda: 100, False), screen


def lines(screen: Screen) -> list[str]:
    return [line.rstrip() for line in screen.text.splitlines()]


def test_each_completed_line_prints_as_it_arrives_and_the_rest_at_the_end() -> None:
    v, screen = view()
    v.handle(TextDeltaEvent("alice", "Reading main"))
    assert screen.text == ""  # half a line waits
    v.handle(TextDeltaEvent("alice", ".py now.\nIt prints 4"))
    assert lines(screen) == ["alice    Reading main.py now."]  # before the message ends
    v.handle(TextDeltaEvent("bob", "bob's first line\nbob's sec"))
    v.handle(TextDeltaEvent("alice", "2.\n\nNext I run it"))
    v.handle(TextDone("alice", "Reading main.py now.\nIt prints 42.\n\nNext I run it"))
    v.handle(TextDone("bob", "bob's first line\nbob's second"))  # no delta for the rest
    assert lines(screen) == [
        "alice    Reading main.py now.",
        "bob      bob's first line",
        "alice    It prints 42.",
        "alice    Next I run it",
        "bob      bob's sec",
    ]


def test_a_message_that_was_not_streamed_prints_whole_and_a_cut_turn_flushes() -> None:
    v, screen = view()
    v.handle(TextDone("carol", "one\ntwo"))
    v.handle(TextDeltaEvent("dave", "interrupted mid"))
    v.handle(TurnFinished("dave", "interrupted", 1))
    assert lines(screen) == ["carol    one", "carol    two", "dave     interrupted mid"]


def test_without_verbose_teammate_text_is_not_printed_and_the_lead_is_unchanged() -> None:
    v, screen = view(verbose=False)
    v.handle(TextDeltaEvent("alice", "line\nmore"))
    v.handle(TextDone("alice", "line\nmore"))
    assert screen.text == ""
    v.settings.verbose = True  # turned on mid-message: the current line is shown whole
    v.handle(TextDeltaEvent("bob", "half "))
    v.handle(TextDeltaEvent("lead", "the lead streams live\n"))
    v.handle(TextDeltaEvent("bob", "and half\n"))
    assert lines(screen) == ["bob      half and half"]
    assert v.live()[0] == "the lead streams live\n"


def test_teammates_streaming_at_once_never_mix_half_lines() -> None:
    v, screen = view()
    names = ["alice", "bob", "carol", "dave"]
    texts = {n: [f"{n} says line {i} {'x' * (i % 17)}".rstrip() for i in range(150)]
             for n in names}
    start = threading.Barrier(len(names))

    def stream(name: str) -> None:
        rng = random.Random(name)
        whole = "\n".join(texts[name])
        start.wait(WAIT)
        pos = 0
        while pos < len(whole):  # chunks cut anywhere, as a model streams them
            step = rng.randint(1, 12)
            v.handle(TextDeltaEvent(name, whole[pos:pos + step]))
            pos += step
        v.handle(TextDone(name, whole))

    threads = [threading.Thread(target=stream, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    seen: dict[str, list[str]] = {n: [] for n in names}
    for line in lines(screen):
        name, _, said = line.partition(" ")
        seen[name].append(said.strip())
    assert seen == texts  # every line whole, after its own teammate's name, in order


@pytest.mark.parametrize("verbose", [True, False])
def test_the_repl_streams_a_teammates_text_with_verbose(workdir: Path, verbose: bool) -> None:
    rt, _ = make_runtime(workdir, {"alice": [Reply("Looking at the board.\nNothing to do.")]})
    h = Harness(rt).start()
    try:
        if verbose:
            h.command("/verbose", "verbose on")
        rt.mail.send("lead", "alice", "say hello", type="message")
        h.command("/spawn alice tester", "spawned alice")
        h.screen.wait_for("alice    is idle")
        text = h.screen.text
        assert ("alice    Looking at the board." in text) is verbose
        assert ("alice    Nothing to do." in text) is verbose
    finally:
        h.quit()
