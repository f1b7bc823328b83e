"""`--output-format stream-json` from a real subprocess, read line by line: init first, the lead's
and a teammate's messages, tool calls and results, task events and denials as they happen
(the run waits on a FIFO only this test writes, after it has read the call's line), the result
last with every field of `--output-format json`; plus --max-turns and --append-system-prompt."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

WAIT = 30.0


def start(workdir: Path, script: dict, *args: str) -> subprocess.Popen:
    path = workdir.parent / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    return subprocess.Popen(
        [sys.executable, "-m", "agent_cli", "--model", f"script:{path}", "-C", str(workdir),
         *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


class Lines:
    """stdout read on a thread, one parsed JSON object per line, handed over in order."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.q: queue.Queue = queue.Queue()
        self.seen: list[dict] = []
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            self.q.put(json.loads(line))  # every line must be one JSON object
        self.q.put(None)

    def until(self, pred) -> dict:
        while True:
            item = self.q.get(timeout=WAIT)
            assert item is not None, f"stream ended without the line; saw {self.seen}"
            self.seen.append(item)
            if pred(item):
                return item

    def rest(self) -> list[dict]:
        out = []
        while (item := self.q.get(timeout=WAIT)) is not None:
            out.append(item)
        self.seen += out
        return out


def tool_use(line: dict, name: str) -> dict | None:
    if line["type"] != "assistant":
        return None
    return next((b for b in line["message"]["content"]
                 if b["type"] == "tool_use" and b["name"] == name), None)


SCRIPT = {
    "lead": [
        {"text": "Planning.", "tool_calls": [
            {"name": "create_task", "input": {"subject": "say hello"}},
            {"name": "spawn_teammate", "input": {"name": "alice", "role": "tester"}}]},
        {"text": "Checking the gate.", "tool_calls": [
            {"name": "shell", "input": {"command": "cat gate.fifo"}}]},
        {"text": "All done."},
        {"text": "Heard from alice."},
        {"text": "Nothing more."},
    ],
    "alice": [
        {"text": "Running.", "tool_calls": [
            {"name": "shell", "input": {"command": "echo from-alice"}}]},
        {"text": "Ran it."},
    ],
}


def test_events_stream_as_they_happen_and_the_result_comes_last(workdir: Path) -> None:
    os.mkfifo(workdir / "gate.fifo")
    proc = start(workdir, SCRIPT, "-p", "plan it", "--wait", "--timeout", "60",
                 "--output-format", "stream-json", "--allow", "Bash(cat gate.fifo)")
    try:
        lines = Lines(proc)
        init = lines.until(lambda x: True)
        assert (init["type"], init["subtype"]) == ("system", "init")
        assert init["cwd"] == str(workdir) and init["model"].startswith("script")
        assert {"create_task", "spawn_teammate", "shell", "read_file"} <= set(init["tools"])
        session = init["session_id"]
        call = lines.until(lambda x: tool_use(x, "shell") is not None and x["agent"] == "lead")
        # The call's line arrived while the command still waits for us: nothing buffered.
        assert proc.poll() is None
        assert not any(x["type"] == "user" and x["agent"] == "lead"
                       and x["message"]["content"][0]["tool_use_id"]
                       == tool_use(call, "shell")["id"] for x in lines.seen)
        with open(workdir / "gate.fifo", "w") as fifo:
            fifo.write("released\n")
        result_line = lines.until(lambda x: x["type"] == "user" and x["agent"] == "lead"
                                  and "released" in x["message"]["content"][0]["content"])
        assert result_line["message"]["content"][0]["is_error"] is False
        rest = lines.rest()
    finally:
        proc.kill() if proc.poll() is None else None
        proc.wait(WAIT)
    # alice's task was left undone (her command was denied): an honest run exits 1
    assert proc.returncode == 1, proc.stderr.read()
    seen = lines.seen
    assert all(x["session_id"] == session for x in seen)
    assert rest[-1]["type"] == "result" and [x["type"] for x in seen].count("result") == 1
    assert rest[-1]["outcome"] == "unfinished"
    kinds = {(x["type"], x.get("agent")) for x in seen}
    assert {("assistant", "lead"), ("assistant", "alice"), ("user", "alice"),
            ("task", "lead"), ("approval", "alice")} <= kinds
    created = next(x for x in seen if x["type"] == "task" and x["action"] == "created")
    assert created["subject"] == "say hello"
    approval = next(x for x in seen if x["type"] == "approval")
    assert (approval["tool"], approval["target"], approval["decision"]) == (
        "shell", "echo from-alice", "deny")
    texts = [b["text"] for x in seen if x["type"] == "assistant" and x["agent"] == "lead"
             for b in x["message"]["content"] if b["type"] == "text"]
    assert texts[:3] == ["Planning.", "Checking the gate.", "All done."]


def test_the_result_line_has_every_field_of_json_output(workdir: Path) -> None:
    script = {"lead": [{"text": "hello"}]}
    proc = subprocess.run(  # the same run as one JSON report
        [sys.executable, "-m", "agent_cli", "--model", "demo", "-C", str(workdir), "-p", "hi",
         "--output-format", "json"], capture_output=True, text=True, timeout=60)
    report = json.loads(proc.stdout)
    streamed = start(workdir, script, "-p", "hi", "--output-format", "stream-json")
    out, err = streamed.communicate(timeout=60)
    assert streamed.returncode == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    result = records[-1]
    assert (result["type"], result["subtype"], result["is_error"]) == ("result", "success", False)
    assert set(report) <= set(result)
    assert result["result"] == "hello" and result["stop_reason"] == "end_turn"
    assert result["num_turns"] == 1 and result["duration_ms"] >= 0


def test_max_turns_stops_the_lead_and_says_so(workdir: Path) -> None:
    script = {"lead": [{"text": "one", "tool_calls": [
        {"name": "list_tasks", "input": {}}]}, {"text": "two", "tool_calls": [
            {"name": "list_tasks", "input": {}}]}, {"text": "three"}]}
    proc = start(workdir, script, "-p", "go", "--max-turns", "2", "--output-format",
                 "stream-json")
    out, err = proc.communicate(timeout=60)
    records = [json.loads(line) for line in out.splitlines()]
    result = records[-1]
    assert proc.returncode == 1 and "--max-turns" in err
    assert (result["subtype"], result["is_error"], result["stop_reason"]) == (
        "error_max_turns", True, "max_turns")
    assert result["max_turns"] == {"limit": 2, "used": 2, "reached": True}
    lead_texts = [b["text"] for x in records if x["type"] == "assistant"
                  for b in x["message"]["content"] if b["type"] == "text"]
    assert lead_texts == ["one", "two"]  # the third request was never made


def test_append_system_prompt_reaches_the_lead_only(workdir: Path) -> None:
    from agent_cli.app import open_runtime
    from agent_cli.cli import build_parser, runtime_config
    from agent_cli.models.scripted import Reply, ScriptedModel

    args = build_parser().parse_args(["-C", str(workdir), "--append-system-prompt",
                                      "Answer in French."])
    config = runtime_config(args)
    model = ScriptedModel({"lead": [Reply("ok")]})
    config.model_factory = lambda agent, spec: model
    rt = open_runtime(workdir, config)
    try:
        rt.team.make_lead().run_turn("hi")
    finally:
        rt.close(5.0)
    assert model.requests_for("lead")[0].system.rstrip().endswith("Answer in French.")
