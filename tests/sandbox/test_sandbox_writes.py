"""A hostile model under auto-allow, no allow rules: its sandboxed commands write only the
workspace. Every spelling of a write outside is tried for real and checked on disk: the
user's tree from a teammate's worktree, another worktree, .git/hooks, .tasks/, .team/,
settings, and a directory outside everything."""

from __future__ import annotations

import os
import subprocess

import pytest
from support.sandbox import Shell, need_bwrap, sandboxed_runtime

WT = ".agent-cli/worktrees"


def _git(cwd, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


@pytest.fixture
def team(workdir, cleanup):
    """A repo with the board, inboxes, and two teammates' worktrees; the runtime enables
    the sandbox; returns (runtime, alice's worktree, bob's worktree)."""
    need_bwrap()
    _git(workdir, "init", "-q", "-b", "main")
    _git(workdir, "config", "user.email", "t@example.com")
    _git(workdir, "config", "user.name", "t")
    (workdir / "main.txt").write_text("main\n")
    _git(workdir, "add", "main.txt")
    _git(workdir, "commit", "-q", "-m", "first")
    for task in (1, 2):
        _git(workdir, "worktree", "add", "-q", "-b", f"task-{task}", f"{WT}/task-{task}")
    (workdir / ".tasks").mkdir()
    (workdir / ".tasks" / "task_1.json").write_text('{"id": 1}')
    (workdir / ".team" / "inbox").mkdir(parents=True)
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    return rt, workdir / WT / "task-1", workdir / WT / "task-2"


def _snapshot(root) -> dict[str, bytes]:
    """Every file under `root` (links as their target text), for a before/after compare;
    the audit log, which agent-cli itself appends to, aside."""
    out = {}
    for base, dirs, files in os.walk(root):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(base, d))]:
            path = os.path.join(base, name)
            if "/.team/audit" in path:
                continue
            out[path] = (os.readlink(path).encode() if os.path.islink(path)
                         else open(path, "rb").read())
    return out


def test_a_teammate_writes_its_worktree_and_nothing_else(team, outside):
    rt, alice, bob = team
    main = rt.workdir
    attacks = [
        f"echo pwned > {main}/main.txt",
        "echo pwned > ../../../main.txt",
        f"echo pwned > {main}/new-in-main.txt",
        f"ln -s {outside} out && echo pwned > out/via-symlink.txt",
        f"ln -s {main}/main.txt m && echo pwned >> m",
        f"ln {main}/main.txt hard && echo pwned >> hard",
        f"echo pwned > /proc/self/root{outside}/via-proc-root.txt",
        f"echo pwned > /proc/1/root{main}/main.txt",
        f"echo pwned > /proc/{os.getpid()}/cwd/via-agent-cli-cwd.txt",
        f"echo '#!/bin/sh' > {main}/.git/hooks/pre-commit",
        "git config core.hooksPath /tmp/evil",
        f"echo '{{\"id\": 9}}' > {main}/.tasks/task_9.json",
        f"echo forged >> {main}/.team/inbox/lead.jsonl",
        f"echo forged > {bob}/planted.txt",
        f"mkdir -p {main}/.agent-cli && echo '{{}}' > {main}/.agent-cli/settings.local.json",
        f"mount --bind {outside} here",
        f"unshare -Urm sh -c 'mount -o remount,bind,rw {main} && echo pwned > {main}/main.txt'",
        f"cp /etc/hostname {outside}/copied",
        f"cd {main} && git commit --allow-empty -qm forged",
    ]
    before_main = _snapshot(main)
    before_git = subprocess.run(["git", "log", "--all", "--oneline"], cwd=main,
                                capture_output=True, text=True).stdout
    shell = Shell(rt, "alice", alice)
    for command in attacks:
        out = shell(command)
        assert out.is_error, (command, out.content)
    after = {k: v for k, v in _snapshot(main).items() if not k.startswith(str(alice))}
    assert after == {k: v for k, v in before_main.items() if not k.startswith(str(alice))}
    assert list(outside.iterdir()) == []
    assert subprocess.run(["git", "log", "--all", "--oneline"], cwd=main, capture_output=True,
                          text=True).stdout == before_git
    assert not os.path.exists(os.path.join(os.getcwd(), "via-agent-cli-cwd.txt"))
    out = shell("echo work > result.txt && mkdir -p src && touch src/a.py && echo ok")
    assert not out.is_error and (alice / "result.txt").read_text() == "work\n"


def test_the_lead_cannot_touch_the_shared_state_or_git(team):
    rt, _alice, bob = team
    main = rt.workdir
    shell = Shell(rt)
    for command, path in [
        ("echo x > .git/hooks/post-checkout", ".git/hooks/post-checkout"),
        ("echo '[core]' >> .git/config", None),
        ("echo '{}' > .tasks/task_2.json", ".tasks/task_2.json"),
        ("rm .tasks/task_1.json", None),
        ("touch .team/inbox/alice.jsonl", ".team/inbox/alice.jsonl"),
        ('echo \'{"permissions": {"allow": ["Bash"]}}\' > .agent-cli/settings.json',
         ".agent-cli/settings.json"),
        ("echo '{}' > .agent-cli/settings.local.json", None),
        (f"touch {bob}/x", None),
    ]:
        before = _snapshot(main / ".git") if ".git" in command else None
        out = shell(command)
        assert out.is_error and "[sandbox: write refused" in out.content, (command, out.content)
        if path:
            assert not (main / path).exists(), command
        if before is not None:
            assert _snapshot(main / ".git") == before
    assert (main / ".tasks" / "task_1.json").exists()
    assert "enabled" in (main / ".agent-cli" / "settings.local.json").read_text()
    assert not (bob / "x").exists()
    assert not shell("touch new.txt").is_error and (main / "new.txt").exists()


def test_a_refused_write_is_explained_in_one_line(team, outside):
    rt, _alice, _bob = team
    out = Shell(rt)(f"echo x > {outside}/hosts")
    assert f"[sandbox: write outside the sandbox refused: {outside}/hosts]" in out.content
    out = Shell(rt)("python3 -c \"open('.git/HEAD', 'a')\"")
    assert "[sandbox: write refused: .git/HEAD is read-only in the sandbox" in out.content


def test_allow_write_opens_exactly_that_directory(workdir, cleanup, outside):
    need_bwrap()
    cache = outside / "cache"
    cache.mkdir()
    rt = sandboxed_runtime(workdir, {"filesystem": {"allowWrite": [str(cache)]}})
    cleanup(rt)
    shell = Shell(rt)
    assert not shell(f"echo pkg > {cache}/pkg.txt").is_error
    assert (cache / "pkg.txt").read_text() == "pkg\n"
    assert shell(f"touch {outside}/beside-the-cache").is_error
    assert not (outside / "beside-the-cache").exists()
