"""`agent-cli tasks ...` as a user scripts it from a second terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli.board import TaskBoard
from agent_cli.cli import main


def run(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    src = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "agent_cli", "-C", str(workdir), "tasks", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.fixture
def cli(workdir: Path, capsys):
    """Run `agent-cli -C workdir tasks ARGS` in-process; returns (exit code, stdout, stderr)."""

    def call(*args: str) -> tuple[int, str, str]:
        code = main(["-C", str(workdir), "tasks", *args])
        out, err = capsys.readouterr()
        return code, out, err

    return call


def test_a_whole_session_from_the_command_line(workdir: Path) -> None:
    assert run(workdir, "add", "Write parser").stdout == "1\n"
    assert run(workdir, "add", "Write tests", "-d", "unit tests").stdout == "2\n"
    r = run(workdir, "add", "Integrate", "--blocked-by", "1", "--blocked-by", "2")
    assert (r.returncode, r.stdout) == (0, "3\n")
    r = run(workdir, "claim", "3", "--as", "carol")
    assert (r.returncode, r.stdout, r.stderr) == (4, "", "agent-cli: task 3 is blocked by #1, #2\n")
    r = run(workdir, "claim", "--as", "alice", "--json")
    claimed = json.loads(r.stdout)
    assert claimed["id"] == 1 and claimed["owner"] == "alice" and claimed["claim_token"]
    r = run(
        workdir,
        "complete",
        "1",
        "--as",
        "alice",
        "--token",
        claimed["claim_token"],
        "--result",
        "parser done",
    )
    assert (r.returncode, r.stdout) == (0, "#1 completed by alice\n")
    r = run(workdir, "show", "1", "--json")
    assert json.loads(r.stdout)["result"] == "parser done"


def test_list_shows_markers_owners_blockers_and_results(cli) -> None:
    cli("add", "Write parser")
    cli("add", "Write tests")
    cli("add", "Integrate", "--blocked-by", "1", "--blocked-by", "2")
    cli("add", "Docs")
    cli("claim", "2", "--as", "bob")
    cli("claim", "1", "--as", "alice")
    cli("complete", "1", "--as", "alice", "--result", "parser done")
    code, out, _ = cli("list")
    lines = out.splitlines()
    assert code == 0
    assert lines[0].split() == ["ID", "SUBJECT", "OWNER", "BLOCKED", "BY", "RESULT"]
    assert lines[1].split() == ["[x]", "#1", "Write", "parser", "alice", "-", "parser", "done"]
    assert lines[2].split() == ["[>]", "#2", "Write", "tests", "bob", "-", "-"]
    assert lines[3].split() == ["[!]", "#3", "Integrate", "-", "#2", "-"]
    assert lines[4].split() == ["[", "]", "#4", "Docs", "-", "-", "-"]
    assert lines[-1].startswith("[ ] pending")


def test_list_json_is_the_array_of_task_objects(cli, workdir: Path) -> None:
    cli("add", "a")
    cli("add", "b", "--blocked-by", "1")
    code, out, _ = cli("list", "--json")
    data = json.loads(out)
    on_disk = [json.loads((workdir / ".tasks" / f"task_{i}.json").read_text()) for i in (1, 2)]
    assert code == 0 and data == on_disk
    assert data[1]["blockedBy"] == [1]


def test_corrupt_file_gets_an_error_row_and_doctor_fails(cli, workdir: Path) -> None:
    cli("add", "good")
    bad = workdir / ".tasks" / "task_2.json"
    bad.write_text("{not json")
    code, out, _ = cli("list")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("[E]"))
    assert "#2" in row and str(bad) in row and "not valid JSON" in row
    code, out, err = cli("list", "--json")
    assert [t["id"] for t in json.loads(out)] == [1] and str(bad) in err
    code, out, _ = cli("doctor")
    assert code == 1
    assert out.splitlines() == [
        f"#2 {bad}: not valid JSON (Expecting property name enclosed in double quotes at line 1)",
        "1 problem on the board",
    ]
    assert bad.read_text() == "{not json"
    bad.unlink()
    assert cli("doctor")[:2] == (0, "board OK: 1 task, no problems\n")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["show", "9"], 3, "no task 9"),
        (["claim", "9", "--as", "bob"], 3, "no task 9"),
        (["claim", "2", "--as", "bob"], 4, "task 2 is blocked by #1"),
        (["claim", "1", "--as", "bob"], 4, "task 1 is owned by alice"),
        (["claim", "--as", "alice"], 4, "alice still holds #1"),
        (["claim", "--as", "../x"], 2, "invalid owner '../x'"),
        (["claim", "--as", "Alice"], 2, "invalid owner 'Alice'"),
        (["complete", "1", "--as", "bob"], 4, "task 1 is owned by alice"),
        (["complete", "1", "--as", "alice", "--token", "forged"], 4, "wrong claim token"),
        (["release", "1", "--as", "bob"], 4, "task 1 is owned by alice"),
        (["add", "x", "--blocked-by", "7"], 3, "no task 7"),
        (["add", ""], 2, "task subject is empty"),
        (
            ["add", "x", "--expect-stdout", "42"],
            2,
            "--expect-stdout/--expect-stdout-file need --verify-command",
        ),
    ],
)
def test_refusals_exit_non_zero_with_one_line(cli, workdir: Path, args, code, message) -> None:
    cli("add", "A")
    cli("add", "B", "--blocked-by", "1")
    cli("claim", "1", "--as", "alice")
    before = {p.name: p.read_bytes() for p in (workdir / ".tasks").iterdir()}
    got, out, err = cli(*args)
    assert got == code
    assert out == ""
    assert err.startswith(f"agent-cli: {message}") and err.count("\n") == 1
    assert {p.name: p.read_bytes() for p in (workdir / ".tasks").iterdir()} == before


def test_complete_without_token_uses_the_owners_own_claim(cli) -> None:
    cli("add", "A")
    cli("add", "B", "--blocked-by", "1")
    cli("claim", "--as", "alice")
    code, out, _ = cli("complete", "1", "--as", "alice", "--result", "ok")
    assert (code, out) == (0, "#1 completed by alice\nnow claimable: #2\n")


def test_claim_prints_id_and_token_and_release_frees_it(cli, workdir: Path) -> None:
    cli("add", "A")
    code, out, _ = cli("claim", "--as", "bob")
    task = TaskBoard(workdir / ".tasks").get(1)
    token, until = task.claim_token, task.lease_expires_at
    assert (code, out) == (
        0,
        f"#1 claimed by bob: A\nclaim token: {token}\n"
        f"lease until: {until} (nothing renews it; complete before then)\n",
    )
    assert cli("release", "1", "--as", "bob")[:2] == (0, "#1 released: pending again\n")
    assert cli("claim", "--as", "carol")[0] == 0


def test_add_with_verify_and_show(cli) -> None:
    code, out, _ = cli(
        "add",
        "Answer",
        "--verify-command",
        "python answer.py",
        "--expect-stdout",
        "42",
        "--expect-exit",
        "0",
    )
    assert (code, out) == (0, "1\n")
    data = json.loads(cli("show", "1", "--json")[1])
    assert data["verify"] == {
        "command": "python answer.py",
        "expected_stdout": "42",
        "expected_stdout_file": None,
        "expected_exit_code": 0,
        "set_by": "cli",  # typed at the command line, not written by a model
    }
    text = cli("show", "1")[1]
    assert "verify:      python answer.py  (expects stdout '42', exit 0, set by cli)" in text


def test_empty_board(cli, workdir: Path) -> None:
    assert cli("list") == (0, "no tasks on the board\n", "")
    assert cli("claim", "--as", "bob") == (4, "", "agent-cli: no tasks on the board\n")
    assert cli("doctor")[:2] == (0, "board OK: 0 tasks, no problems\n")
    assert not (workdir / ".tasks").exists()  # reading never creates the board


def test_racing_cli_processes_claim_c_exactly_once(workdir: Path) -> None:
    board = TaskBoard(workdir / ".tasks")
    for subject in ("A", "B"):
        task = board.create(subject)
        board.claim(task.id, "alice" if subject == "A" else "bob")
    board.create("C", blocked_by=[1, 2])
    board.complete(1, "alice", board.get(1).claim_token, "ok")
    board.complete(2, "bob", board.get(2).claim_token, "ok")
    src = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agent_cli",
                "-C",
                str(workdir),
                "tasks",
                "claim",
                "3",
                "--as",
                f"p{i}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(5)
    ]
    results = [(p.wait(60), p.stdout.read(), p.stderr.read()) for p in procs]
    winners = [i for i, (code, _, _) in enumerate(results) if code == 0]
    assert len(winners) == 1, results
    owner = f"p{winners[0]}"
    for i, (code, _, err) in enumerate(results):
        if i != winners[0]:
            assert (code, err) == (4, f"agent-cli: task 3 is owned by {owner}\n")
    assert board.get(3).owner == owner


def _claimed_task(workdir: Path, expected: str) -> tuple[TaskBoard, int, str]:
    board = TaskBoard(workdir / ".tasks")
    task = board.create("answer", verify={"command": "echo 42", "expected_stdout": expected})
    claimed = board.claim(task.id, "bob")
    return board, task.id, claimed.claim_token


def test_tasks_complete_refuses_when_the_verify_fails(workdir, capsys):
    board, task_id, _ = _claimed_task(workdir, "43")
    code = main(["-C", str(workdir), "tasks", "complete", str(task_id), "--as", "bob",
                     "--run-verify"])  # its writer is unknown: accepted explicitly
    out, err = capsys.readouterr()
    assert code == 4
    assert err.strip() == f"agent-cli: task {task_id} not completed: expected stdout '43', got '42'"
    assert "running verify: echo 42" in out
    task = board.get(task_id)
    assert task.status == "in_progress" and task.owner == "bob"


def test_tasks_complete_runs_a_passing_verify_then_completes(workdir, capsys):
    board, task_id, token = _claimed_task(workdir, "42")
    argv = ["-C", str(workdir), "tasks", "complete", str(task_id), "--as", "bob", "--token", token,
            "--run-verify"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "verify passed" in out and f"#{task_id} completed by bob" in out
    assert board.get(task_id).status == "completed"


def test_tasks_complete_by_someone_else_does_not_run_the_verify(workdir, capsys):
    board = TaskBoard(workdir / ".tasks")
    task = board.create("x", verify={"command": "touch ran", "expected_stdout": ""})
    board.claim(task.id, "bob")
    code = main(["-C", str(workdir), "tasks", "complete", str(task.id), "--as", "eve"])
    assert code == 4 and "owned by bob" in capsys.readouterr().err
    assert not (workdir / "ran").exists()
