"""The real `agent-cli -p ... --wait` process against the wire-level stub: the exit code and
stderr say what the board says (a forgotten task exits 1 naming it; Ctrl-C reports the run as
interrupted with exit 130), and retries are configured from the environment."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from pathlib import Path

from support.e2e_claude import HANG_S, MODEL, cli_command, cli_env, wait_for_process_event
from support.fallible import Crew, assert_all_valid, complete
from support.stub_server import Fault, Reply, StubServer


def start(workdir: Path, stub: StubServer, *extra: str, env: dict | None = None):
    """The run's own --timeout is a hang guard too: a loaded machine never turns a run's
    outcome into "timed_out"."""
    args = [*cli_command(), "-C", str(workdir), "--model", MODEL, "-p", "go", "--wait",
            "--timeout", f"{HANG_S:g}", "--idle-timeout", "0", "--output-format", "json",
            *extra]
    return subprocess.Popen(args, env=cli_env(stub.url, extra=env or {}), cwd=workdir,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_forgotten_task_exits_1_with_one_line_naming_it(workdir):
    crew = Crew({"alice": lambda body, turn: Reply("All done here.")})
    with StubServer(responder=crew) as stub:
        proc = start(workdir, stub)
        out, err = proc.communicate(timeout=HANG_S)
        assert_all_valid(stub, crew)
    assert proc.returncode == 1
    report = json.loads(out)
    assert report["outcome"] == "unfinished"
    assert [t["status"] for t in report["tasks"]] == ["pending"]  # as left on disk
    # (the reminders and the stall report are also warning lines as they happen)
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith("agent-cli: warning:")]
    assert lines == ['agent-cli: unfinished #1 "A" (pending, alice): alice ended 3 turns '
                     'without completing #1 "A"; it stays in progress with alice']
    assert "Traceback" not in err


def test_retries_follow_the_environment_and_the_run_completes(workdir):
    faults = [Fault.overloaded(retry_after=None)] * 2

    def alice(body, turn):
        return faults.pop(0) if faults else complete(body, "done")

    crew = Crew({"alice": alice})
    with StubServer(responder=crew) as stub:
        proc = start(workdir, stub, env={"AGENT_CLI_RETRY_BASE_S": "0.01",
                                         "AGENT_CLI_RETRY_ATTEMPTS": "3"})
        out, err = proc.communicate(timeout=HANG_S)
        assert len(crew.requests_of(stub, "alice")) == 3  # 2 faults + 1 success, no SDK retry
        assert_all_valid(stub, crew)
    assert proc.returncode == 0, err
    assert json.loads(out)["outcome"] == "completed"


def test_a_bad_retry_setting_is_one_clear_line(workdir):
    with StubServer() as stub:
        proc = start(workdir, stub, env={"AGENT_CLI_RETRY_ATTEMPTS": "many"})
        out, err = proc.communicate(timeout=HANG_S)
    assert proc.returncode == 2 and out == ""
    assert err.strip() == "agent-cli: AGENT_CLI_RETRY_ATTEMPTS: 'many' is not a number"


def test_ctrl_c_reports_the_run_as_interrupted(workdir):
    """Its only clocks are hang guards: the signal goes once alice's request is at the stub
    (however long a loaded machine takes to get there), and her request is never answered
    before the run has ended."""
    working, release = threading.Event(), threading.Event()

    def alice(body, turn):
        working.set()
        release.wait(2 * HANG_S)  # answered only after the run ended (or the test failed)
        return Reply("too late")

    crew = Crew({"alice": alice})
    with StubServer(responder=crew) as stub:
        proc = start(workdir, stub)
        try:
            wait_for_process_event(working, proc, "alice's first request")
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=HANG_S)
        finally:
            proc.kill()
            release.set()
    assert proc.returncode == 130, err
    report = json.loads(out)
    assert report["outcome"] == "interrupted"
    assert [(u["id"], u["owner"]) for u in report["unfinished"]] == [(1, "alice")]
    assert report["unfinished"][0]["reason"] == "alice is still working on it"
    assert "agent-cli: interrupted" in err and "Traceback" not in err
