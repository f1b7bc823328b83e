"""Host-private state: where it lives, what counts (this user's regular files, plain relative
paths), and how a user's old state in `.agent-cli/` is moved once."""

from __future__ import annotations

import json
import os
from pathlib import Path

from support.worktree import git, git_repo

from agent_cli.private_state import TRUST_FILE, PrivateStore, private_dir
from agent_cli.runtime import Runtime, RuntimeConfig


def test_it_lives_in_the_git_directory_or_under_the_users_home(workdir: Path) -> None:
    outside = private_dir(workdir)
    assert outside.parent == Path(os.path.realpath(os.environ["AGENT_CLI_HOME"])) / "projects"
    git_repo(workdir, {"a.txt": "a\n"})
    assert private_dir(workdir) == Path(os.path.realpath(workdir)) / ".git" / "agent-cli"
    (workdir / "sub").mkdir()
    assert private_dir(workdir / "sub").parent == workdir.resolve() / ".git" / "agent-cli" / "trees"


def test_a_record_another_user_owns_or_a_symlink_counts_for_nothing(workdir: Path) -> None:
    git_repo(workdir, {"a.txt": "a\n"})
    store = PrivateStore(workdir)
    store.write(TRUST_FILE, {"trustedProjectSettings": "x"})
    assert store.read(TRUST_FILE) == {"trustedProjectSettings": "x"}
    os.chown(store.path(TRUST_FILE), 54321, -1)
    assert store.read(TRUST_FILE) == {}
    assert any("owned by another user" in w for w in store.warnings)
    (workdir / "elsewhere.json").write_text(json.dumps({"trustedProjectSettings": "x"}))
    os.symlink(workdir / "elsewhere.json", store.path(TRUST_FILE))
    assert store.read(TRUST_FILE) == {}
    assert (workdir / "elsewhere.json").exists()  # set aside, never followed or deleted


def test_a_journal_naming_a_path_out_is_set_aside_and_touches_nothing(workdir, tmp_path):
    git_repo(workdir, {"a.txt": "a\n"})
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    blob = git(tmp_path, "hash-object", str(victim)).strip()
    rt = Runtime.open(workdir, RuntimeConfig())
    landing = rt.worktrees.landing
    for path in ("../victim.txt", str(victim), "a/../../victim.txt"):
        landing.store.write("landing.json", {
            "task": 1, "owner": "m", "token": "t", "result": "r", "step": "apply",
            "files": [{"path": path, "pre": ["100644", blob], "post": None}]})
        assert landing.resume() is None
        assert victim.read_text() == "keep\n"
        assert not landing.journal.exists()
        assert any("not trusted, nothing it names was touched" in w
                   for w in landing.store.warnings)


def test_a_symlinked_directory_in_the_tree_is_never_written_through(workdir, tmp_path):
    git_repo(workdir, {"a.txt": "a\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("keep\n")
    os.symlink(outside, workdir / "docs")
    blob = git(workdir, "hash-object", "-w", str(outside / "x.txt")).strip()
    rt = Runtime.open(workdir, RuntimeConfig())
    landing = rt.worktrees.landing
    files = [{"path": "docs/x.txt", "pre": ["100644", blob], "post": None},
             {"path": "docs/new.txt", "pre": None, "post": ["100644", blob]}]
    assert landing.apply.finish(files) == ["docs/new.txt"]  # left alone, said so
    assert sorted(os.listdir(outside)) == ["x.txt"]
    assert (outside / "x.txt").read_text() == "keep\n"


def test_a_users_old_untracked_state_moves_once_and_tracked_state_never(workdir: Path) -> None:
    git_repo(workdir, {"a.txt": "a\n"})
    old = workdir / ".agent-cli"
    old.mkdir()
    local = {"permissions": {"allow": ["Bash(ls)"]}, "trustedProjectSettings": "fp",
             "enabledMcpjsonServers": ["srv"]}
    (old / "settings.local.json").write_text(json.dumps(local))
    rt = Runtime.open(workdir, RuntimeConfig())
    assert rt.state_warnings == []
    trust = PrivateStore(workdir).read(TRUST_FILE)
    assert trust == {"trustedProjectSettings": "fp", "enabledMcpjsonServers": ["srv"]}
    left = json.loads((old / "settings.local.json").read_text())
    assert left == {"permissions": {"allow": ["Bash(ls)"]}}
    # once: trust keys written there later are not moved, they are reported
    (old / "settings.local.json").write_text(json.dumps({**left, "trustedProjectSettings": "y"}))
    rt = Runtime.open(workdir, RuntimeConfig())
    assert PrivateStore(workdir).read(TRUST_FILE)["trustedProjectSettings"] == "fp"
    assert len(rt.state_warnings) == 1 and "counts for nothing" in rt.state_warnings[0]
