"""Hook scripts written the way Claude Code's documentation shows them, run unchanged: they
read `.tool_name`, `.tool_input.file_path` / `.command`, exit 2 to block (stderr reaches the
model), rewrite a written file on PostToolUse, and rewrite a call with `updatedInput` -- and
the effects are checked on disk."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from support.agent import results_of
from support.hooks import trust_project
from support.team import Call, Reply, make_runtime

from agent_cli.models.scripted import ScriptedModel

PY = shlex.quote(sys.executable)

# Claude Code's "block rm -rf" example, in Python: read the event, exit 2 with a reason.
BLOCK_RM = r'''
import json, sys
event = json.load(sys.stdin)
if event["tool_name"] == "Bash" and "rm -rf" in event["tool_input"]["command"]:
    print("rm -rf is not allowed here", file=sys.stderr)
    sys.exit(2)
'''
# A formatter on PostToolUse: strips trailing blanks in the file the Write / Edit touched.
FORMATTER = r'''
import json, sys
event = json.load(sys.stdin)
path = event["tool_input"]["file_path"]
if path.endswith(".py") and event["tool_response"]["success"]:
    with open(path) as fh:
        lines = [line.rstrip() for line in fh.read().splitlines()]
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
'''
# Protect .env files: the path a Write / Edit names, read as Claude Code sends it.
PROTECT_ENV = r'''
import json, sys
path = json.load(sys.stdin)["tool_input"].get("file_path", "")
if path.endswith(".env"):
    sys.exit(2)
'''
# Log every event's JSON, one line each.
LOG = r'''
import sys
with open(sys.argv[1], "a") as fh:
    fh.write(sys.stdin.read().replace("\n", " ") + "\n")
'''


def script(tmp: Path, name: str, source: str, *args: str) -> str:
    path = tmp / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return " ".join([PY, shlex.quote(str(path)), *(shlex.quote(a) for a in args)])


def settings(workdir: Path, hooks: dict[str, list[tuple[str, str]]]) -> None:
    """The project's `.agent-cli/settings.json`, trusted, in Claude Code's hook format."""
    out = {event: [{"matcher": m, "hooks": [{"type": "command", "command": c}]}
                   for m, c in groups] for event, groups in hooks.items()}
    path = workdir / ".agent-cli" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": out}), encoding="utf-8")
    trust_project(workdir)


def run_lead(workdir: Path, calls: list[Call], cleanup, notices: list | None = None,
             **config) -> list:
    model = ScriptedModel({"lead": [Reply("working", calls), Reply("done")]})
    rt = make_runtime(workdir, model, **config)
    cleanup(rt)
    if notices is not None:
        rt.events.subscribe(lambda e: notices.append(e.text) if e.kind == "Notice" else None)
    rt.team.make_lead().run_turn("go")
    return results_of(model.requests_for("lead")[1].messages[-1])


def logged(log: Path) -> list[dict]:
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


def test_exit_2_on_rm_rf_blocks_the_call_and_the_model_reads_why(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    (workdir / "keep").mkdir()
    (workdir / "keep" / "f").write_text("x")
    settings(workdir, {"PreToolUse": [("Bash", script(tmp_path, "rm", BLOCK_RM))]})
    results = run_lead(workdir, [Call("shell", {"command": "rm -rf keep"}),
                                 Call("shell", {"command": "touch ok"})], cleanup,
                       allow=["Bash(rm *)", "Bash(touch *)"])
    assert (workdir / "keep" / "f").read_text() == "x"
    assert results[0].is_error and "rm -rf is not allowed here" in results[0].content
    assert not results[1].is_error and (workdir / "ok").exists()


def test_a_formatter_on_post_tool_use_rewrites_the_written_file(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    settings(workdir, {"PostToolUse": [("Write|Edit", script(tmp_path, "fmt", FORMATTER))]})
    (workdir / "b.py").write_text("y = 2\n")
    run_lead(workdir, [Call("write_file", {"path": "a.py", "content": "x = 1   \nz = 3 \n"}),
                       Call("edit_file", {"path": "b.py", "old_string": "y = 2",
                                          "new_string": "y = 20    "})],
             cleanup, allow=["Write(*.py)", "Edit(*.py)"])
    assert (workdir / "a.py").read_text() == "x = 1\nz = 3\n"
    assert (workdir / "b.py").read_text() == "y = 20\n"


def test_a_file_path_check_blocks_writes_to_env_files(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    settings(workdir, {"PreToolUse": [("Write|Edit", script(tmp_path, "env", PROTECT_ENV))]})
    results = run_lead(workdir, [Call("write_file", {"path": "prod.env", "content": "K=1"}),
                                 Call("write_file", {"path": "notes.md", "content": "n"})],
                       cleanup, allow=["Write(*)"])
    assert not (workdir / "prod.env").exists() and (workdir / "notes.md").read_text() == "n"
    assert results[0].is_error and not results[1].is_error


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_the_documented_jq_one_liner_reads_the_file_path(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    seen = tmp_path / "paths.txt"
    command = f"jq -r '.tool_input.file_path' >> {shlex.quote(str(seen))}"
    settings(workdir, {"PostToolUse": [("Edit|MultiEdit|Write", command)]})
    run_lead(workdir, [Call("write_file", {"path": "src/m.py", "content": "m\n"})], cleanup,
             allow=["Write(src/*)"])
    assert seen.read_text().splitlines() == [str(workdir / "src" / "m.py")]


def test_each_tool_is_seen_with_claude_codes_name_and_fields(
    workdir: Path, tmp_path: Path, cleanup
) -> None:
    log = tmp_path / "events.log"
    settings(workdir, {"PreToolUse": [("*", script(tmp_path, "log", LOG, str(log)))]})
    (workdir / "a.txt").write_text("one\ntwo\n")
    run_lead(workdir, [
        Call("read_file", {"path": "a.txt", "offset": 2, "limit": 1}),
        Call("edit_file", {"path": "a.txt", "old_string": "one", "new_string": "1",
                           "replace_all": True}),
        Call("glob", {"pattern": "*.txt"}),
        Call("grep", {"pattern": "two", "path": "a.txt"}),
        Call("shell", {"command": "true", "timeout_s": 5}),
    ], cleanup, allow=["Edit(*)", "Bash(true)"])
    seen = {e["tool_name"]: e["tool_input"] for e in logged(log)}
    a = str(workdir / "a.txt")
    assert seen["Read"] == {"file_path": a, "offset": 2, "limit": 1}
    assert seen["Edit"] == {"file_path": a, "old_string": "one", "new_string": "1",
                            "replace_all": True}
    assert seen["Glob"] == {"path": str(workdir), "pattern": "*.txt"}
    assert seen["Grep"] == {"path": a, "pattern": "two"}
    assert seen["Bash"] == {"command": "true", "description": "", "timeout": 5000}


def rewrite(tmp: Path, updated: dict) -> str:
    """A PreToolUse hook that answers allow with this updatedInput."""
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                     "permissionDecision": "allow", "updatedInput": updated}}
    source = f"import sys; sys.stdin.read(); print({json.dumps(json.dumps(answer))})"
    return script(tmp, "rewrite", source)


def test_updated_input_rewrites_the_call_that_runs(workdir: Path, tmp_path: Path,
                                                   cleanup) -> None:
    target = str(workdir / "moved.txt")
    settings(workdir, {"PreToolUse": [("Write", rewrite(tmp_path, {"file_path": target}))]})
    notices: list[str] = []
    results = run_lead(workdir, [Call("write_file", {"path": "asked.txt", "content": "c"})],
                       cleanup, notices)
    assert not results[0].is_error, results[0].content
    assert "a PreToolUse hook changed the write_file call: moved.txt" in notices
    assert (workdir / "moved.txt").read_text() == "c" and not (workdir / "asked.txt").exists()


@pytest.mark.parametrize("updated, config", [
    ({"file_path": "SECRET"}, {"deny": ["Write(secret/**)"]}),  # a deny rule still holds
    ({"file_path": "OUTSIDE"}, {}),  # confinement still holds
    ({"content": 5}, {}),  # input is validated again
])
def test_updated_input_still_meets_the_gate_and_the_checks(
    workdir: Path, tmp_path: Path, cleanup, updated: dict, config: dict
) -> None:
    outside = tmp_path / "outside.txt"
    (workdir / "secret").mkdir()
    paths = {"SECRET": str(workdir / "secret" / "k.txt"), "OUTSIDE": str(outside)}
    updated = {k: paths.get(v, v) for k, v in updated.items()}
    settings(workdir, {"PreToolUse": [("Write", rewrite(tmp_path, updated))]})
    results = run_lead(workdir, [Call("write_file", {"path": "a.txt", "content": "c"})],
                       cleanup, **config)
    assert results[0].is_error, results[0].content
    assert not outside.exists() and not (workdir / "secret" / "k.txt").exists()
    assert not (workdir / "a.txt").exists()
