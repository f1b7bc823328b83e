"""The whole product on the Claude path: the real `agent-cli` command line in a subprocess,
its Anthropic adapter and the official SDK talking to the wire-level stub on 127.0.0.1.

The stub plays Claude for every agent (tests/support/e2e_claude.TeamScript): the lead
creates two tasks (the second blocked by the first, with a verify), spawns alice; alice is
auto-claimed each task, runs `python main.py` through the permission gate (allowed by an
--allow rule), completes with the claim token the host injected; the host runs the verify.
Every request the SDK sent must be one the real API accepts, with the prompt-cache
breakpoints on the system prompt and the last tool, and the usage the stub reported (cache
tokens included) must be what the run counts.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.e2e_claude import (
    MODEL,
    TeamScript,
    cli_command,
    cli_env,
    make_project,
    requests_by,
    usage_sent,
)
from support.stub_server import Fault, StubServer

RUN_LIMIT_S = 90  # a hung run fails the test instead of hanging the suite


def run_cli(
    workdir: Path,
    stub: StubServer,
    *extra: str,
    api_key: str = "test",
    allow: tuple[str, ...] = ("Bash(python main.py)",),
):
    args = [
        *cli_command(),
        "-C",
        str(workdir),
        "--model",
        MODEL,
        "-p",
        "Check that main.py prints what expected.txt holds.",
        "--wait",
        "--timeout",
        "60",
        "--idle-timeout",
        "0",
        *(f"--allow={rule}" for rule in allow),
        *extra,
    ]
    return subprocess.run(
        args,
        env=cli_env(stub.url, api_key),
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
        cwd=workdir,
    )


def run_json(workdir: Path, stub: StubServer, code: int = 0, **kwargs: Any) -> dict[str, Any]:
    proc = run_cli(workdir, stub, "--output-format", "json", **kwargs)
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def script() -> TeamScript:
    return TeamScript()


@pytest.fixture
def stub(script: TeamScript) -> Iterator[StubServer]:
    with StubServer(responder=script) as server:
        yield server


def assert_api_happy(stub: StubServer) -> None:
    """Zero requests the API would refuse, and every one carries the cache breakpoints."""
    assert stub.rejections == []
    assert stub.responder_errors == []
    messages = [b for b in stub.requests if b.get("messages")]
    assert messages
    for body in messages:
        assert body["model"] == MODEL
        assert body["stream"] is True
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert all("cache_control" not in t for t in body["tools"][:-1])


def test_lead_and_teammate_finish_a_verified_task_through_the_sdk(workdir, stub, script):
    make_project(workdir, expected="42")
    report = run_json(workdir, stub)

    tasks = {t["id"]: t for t in report["tasks"]}
    assert [tasks[1]["status"], tasks[2]["status"]] == ["completed", "completed"]
    assert tasks[1]["owner"] == tasks[2]["owner"] == "alice"
    assert tasks[1]["result"] == "ran python main.py: 42"
    assert tasks[2]["blockedBy"] == [1]
    assert tasks[2]["verify"]["command"] == "python main.py"
    assert tasks[1]["claim_token"] is None and tasks[2]["claim_token"] is None
    # main.py logs each run: once by alice's shell call, once by the host's verify
    assert (workdir / "runs.log").read_text(encoding="utf-8").splitlines() == ["ran", "ran"]
    audit = [json.loads(x) for x in (workdir / ".team" / "audit.jsonl").read_text().splitlines()]
    shells = [a for a in audit if a["tool"] == "shell" and a["agent"] == "alice"]
    assert len(shells) == 2 and all(a["decision"] == "allow" for a in shells)

    (alice,) = report["team"]
    assert (alice["name"], alice["role"], alice["status"]) == ("alice", "checker", "idle")
    assert report["denials"] == []
    assert report["result"] == "alice reported back: both tasks are completed and verified."
    assert [t["stop_reason"] for t in report["lead_turns"]] == ["end_turn", "end_turn"]

    lead_sent, alice_sent = usage_sent(stub, "lead"), usage_sent(stub, "alice")
    assert lead_sent["cache_read_input_tokens"] > 0 < lead_sent["cache_creation_input_tokens"]
    lead = report["usage"]["lead"]
    assert lead["input_tokens"] == lead_sent["input_tokens"]
    assert lead["output_tokens"] == lead_sent["output_tokens"]
    assert lead["total_tokens"] == sum(lead_sent.values())  # cache tokens counted too
    assert report["usage"]["teammates"] == {"alice": sum(alice_sent.values())}
    assert report["usage"]["total_tokens"] == sum(lead_sent.values()) + sum(alice_sent.values())
    assert_api_happy(stub)


def test_teammate_sees_its_name_and_the_host_tags_in_the_wire_requests(workdir, stub):
    make_project(workdir)
    run_json(workdir, stub)
    alice = requests_by(stub, "alice")
    system = alice[0]["system"][0]["text"]
    assert system.startswith("You are alice,") and '"checker"' in system
    assert "$name" not in system and "$workdir" not in system
    first = alice[0]["messages"][0]["content"]
    texts = [b["text"] for b in first if b.get("type") == "text"]
    assert any(t.startswith('<auto-claimed-task id="1" claim_token="') for t in texts)
    tools = {t["name"] for t in alice[0]["tools"]}
    assert {"complete_task", "claim_task", "idle", "shell", "submit_plan"} <= tools
    assert "create_task" not in tools and "spawn_teammate" not in tools
    lead = requests_by(stub, "lead")
    assert "create_task" in {t["name"] for t in lead[0]["tools"]}
    assert "claim_task" not in {t["name"] for t in lead[0]["tools"]}
    inbox = lead[-1]["messages"][-1]["content"]
    assert any('<message from="alice" type="result">' in b.get("text", "") for b in inbox)


def test_an_overloaded_529_during_the_teammates_turn_is_retried(workdir):
    script = TeamScript(fault_first_teammate_call=Fault.overloaded(retry_after="0.01"))
    with StubServer(responder=script) as stub:
        make_project(workdir)
        report = run_json(workdir, stub)
        alice = requests_by(stub, "alice")
        assert script.faults_sent == ["alice"]
        assert alice[0] == alice[1]  # the SDK sent the very same request again
        assert [t["status"] for t in report["tasks"]] == ["completed", "completed"]
        assert report["team"][0]["status"] == "idle"
        assert_api_happy(stub)


def test_a_failed_verify_leaves_the_task_with_its_owner(workdir, stub):
    make_project(workdir, expected="43")
    report = run_json(workdir, stub, code=1)
    tasks = {t["id"]: t for t in report["tasks"]}
    assert tasks[1]["status"] == "completed"
    # held by alice until the shutdown released it; the outcome says why it is not done
    assert (tasks[2]["status"], tasks[2]["owner"]) == ("pending", None)
    assert tasks[2]["result"] is None
    assert report["outcome"] == "unfinished"
    assert report["unfinished"] == [{
        "id": 2, "subject": "check the output", "status": "pending", "owner": "alice",
        "reason": "verify failed: expected stdout '43', got '42'"}]
    assert_api_happy(stub)


def test_a_denied_command_keeps_the_task_and_the_lead_hears_it_once(workdir, stub):
    make_project(workdir)
    report = run_json(workdir, stub, code=1, allow=())  # headless: nobody to ask -> denied
    tasks = {t["id"]: t for t in report["tasks"]}
    assert (tasks[1]["status"], tasks[1]["owner"]) == ("pending", None)  # after shutdown
    assert tasks[2]["status"] == "pending"
    assert [(u["id"], u["owner"]) for u in report["unfinished"]] == [(1, "alice"), (2, None)]
    assert report["unfinished"][0]["reason"].startswith("shell run was denied")
    assert report["unfinished"][1]["reason"] == "blocked by #1"
    assert not (workdir / "runs.log").exists()
    assert [(d["agent"], d["tool"], d["rule"]) for d in report["denials"]] == [
        ("alice", "shell", "Bash(python main.py)")
    ]
    (shell_result,) = [
        b
        for b in requests_by(stub, "alice")[1]["messages"][-1]["content"]
        if b.get("type") == "tool_result"
    ]
    assert shell_result["is_error"] is True
    inbox = requests_by(stub, "lead")[-1]["messages"][-1]["content"][0]["text"]
    assert inbox.count('<message from="alice" type="message">') == 1  # no second host report
    assert "was refused" in inbox
    assert_api_happy(stub)


def test_a_rejected_api_key_is_one_clear_line_and_a_failure(workdir, script):
    with StubServer(responder=script, api_key="the-right-key") as stub:
        proc = run_cli(workdir, stub, api_key="wrong-key")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "authentication" in lines[0] and "401" in lines[0]
    assert len(stub.requests) == 1  # an auth failure is not retried
    assert script.seen == {}
