"""What a headless denial tells its reader: the reason whole (a line too long is shortened at
a word and ends with "…", never cut mid-word), and what a headless user can do about it."""

from __future__ import annotations

import io
import json
from argparse import Namespace

from support.team import Call, Reply, make_runtime

from agent_cli.models.scripted import ScriptedModel
from agent_cli.shorten import shorten
from agent_cli.ui.headless import run_headless
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


def test_a_long_denied_command_is_shortened_at_a_word_in_the_reason(workdir, cleanup):
    command = "echo " + " ".join(f"word{i}" for i in range(80))  # ~500 characters
    model = ScriptedModel({
        "lead": [Reply(tool_calls=[Call("create_task", {"subject": "say it"}),
                                   Call("spawn_teammate", {"name": "alice", "role": "dev"})]),
                 Reply("alice is on it.")],
        "alice": [Reply(tool_calls=[Call("shell", {"command": command})]),
                  Reply("It was denied.")]},
        responder=lambda request: Reply("Noted."))
    rt = make_runtime(workdir, model)
    cleanup(rt)
    out, err = io.StringIO(), io.StringIO()
    code = run_headless(rt, Namespace(prompt="go", wait=True, timeout=30,
                                      output_format="json"), out=out, err=err)
    report = json.loads(out.getvalue())
    [undone] = report["unfinished"]
    assert code == 1
    reason = undone["reason"]
    assert reason.startswith("shell run was denied (no human was available to approve this "
                             "shell command (echo word0 word1 ")
    shown = reason.split("(echo ", 1)[1].split(")", 1)[0]
    assert shown.endswith("…") and shown.removesuffix("…").split()[-1] in command.split()
    assert reason.endswith("To let it run, rerun with --allow and the rule printed for it on "
                           'stderr ("denials" in the JSON).)')  # the rule itself is too long
    assert [d["rule"] for d in report["denials"]] == [f"Bash({command})"]  # ...in full there
