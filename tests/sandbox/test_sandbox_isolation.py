"""What a sandboxed command cannot read, reach or leave behind: denyRead files, Read(...)
deny rules and credential stores are hidden; there is no network (a loopback server the
test runs receives nothing); agent-cli is neither visible nor killable; nothing keeps
running after the command; no keystroke reaches the terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time
import uuid

from support.sandbox import Shell, need_bwrap, sandboxed_runtime


def test_deny_read_rules_and_credential_stores_are_hidden(workdir, cleanup, outside,
                                                           monkeypatch):
    need_bwrap()
    home = outside / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY")
    (home / ".netrc").write_text("machine x password NETRC-SECRET")
    (home / ".pgpass").write_text("db:5432:team:ann:PGPASS-SECRET")  # the team board's
    monkeypatch.setenv("HOME", str(home))
    (outside / "denied.txt").write_text("DENYREAD-SECRET")
    (workdir / "secrets").mkdir()
    (workdir / "secrets" / "key").write_text("RULE-SECRET")
    (workdir / "readme.txt").write_text("public")
    rt = sandboxed_runtime(workdir, {"filesystem": {"denyRead": [str(outside / "denied.txt")]}},
                           deny=["Read(secrets/**)"])
    cleanup(rt)
    shell = Shell(rt)
    for path in (f"{outside}/denied.txt", "secrets/key", "~/.ssh/id_ed25519", "~/.netrc",
                 "~/.pgpass"):
        out = shell(f"cat {path}; ls -A $(dirname {path})")
        assert "SECRET" not in out.content and "PRIVATE" not in out.content, (path, out.content)
    out = shell("cat ~/.ssh/id_ed25519")
    assert "[sandbox: read refused: " in out.content and "hidden by the sandbox" in out.content
    assert shell("cat readme.txt").content.startswith("public")
    assert (workdir / "secrets" / "key").read_text() == "RULE-SECRET"  # hidden, not harmed


def test_no_network_a_loopback_server_receives_nothing(workdir, cleanup, loopback):
    need_bwrap()
    port, seen = loopback.port, loopback.seen
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    fetch = (f"{sys.executable} -c \"import urllib.request as u; "
             f"print(u.urlopen('http://127.0.0.1:{port}/x', timeout=5).read())\"")
    out = Shell(rt)(fetch)
    assert out.is_error and "secret-from-loopback" not in out.content
    assert seen == []
    out = Shell(rt)(f"{sys.executable} -c \"import socket; socket.getaddrinfo('pypi.org', 443)\"")
    assert "[sandbox: network access refused by the sandbox: it has no network" in out.content


def test_agent_cli_is_invisible_unkillable_and_untraceable(workdir, cleanup):
    need_bwrap()
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    me = os.getpid()
    out = Shell(rt)(f"kill -9 {me}; kill -STOP {me}; ls /proc/{me}; "
                    f"cat /proc/{me}/environ; ls -d /proc/[0-9]* | wc -l")
    assert "No such process" in out.content
    count = int(out.content.strip().splitlines()[-2])
    assert count < 8, out.content  # only the sandbox's own processes are visible
    attach = (f"{sys.executable} -c \"import ctypes, os; libc = ctypes.CDLL(None, "
              f"use_errno=True); print(libc.ptrace(16, {me}, 0, 0), ctypes.get_errno())\"")
    assert Shell(rt)(attach).content.startswith("-1 3\n")  # PTRACE_ATTACH: ESRCH, no such pid
    os.kill(me, 0)  # still here, never stopped


def _running(marker: str) -> bool:
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    return True
        except OSError:
            continue
    return False


def test_no_process_is_left_running_after_the_command(workdir, cleanup):
    need_bwrap()
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    marker = f"leftover-{uuid.uuid4().hex}"
    out = Shell(rt)(f"(exec -a {marker} sleep 300) >/dev/null 2>&1 & "
                    f"setsid bash -c 'exec -a {marker} sleep 300' >/dev/null 2>&1 & "
                    f"nohup bash -c 'exec -a {marker} sleep 300' >/dev/null 2>&1 & echo started")
    assert "started" in out.content
    deadline = time.monotonic() + 30  # the namespace is torn down as the command ends
    while _running(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(marker)


def test_no_keystroke_reaches_the_terminal(workdir, cleanup):
    """The wrapped command gets a real terminal as stdin and tries TIOCSTI on it and on
    /dev/tty (unsandboxed, as root, that injects `X\n`): nothing reaches the input queue."""
    need_bwrap()
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    (workdir / "inject.py").write_text(
        "import fcntl, termios\n"
        "def inject(fd):\n"
        "    for c in b'X\\n':\n"
        "        fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))\n"
        "    print('injected')\n"
        "for target in (lambda: 0, lambda: open('/dev/tty', 'rb').fileno()):\n"
        "    try:\n"
        "        inject(target())\n"
        "    except OSError as exc:\n"
        "        print('refused', exc)\n")
    wrapped = rt.sandbox.wrap(f"{sys.executable} inject.py", workdir, workdir)
    master, slave = pty.openpty()
    try:
        proc = subprocess.run(wrapped.argv, env=wrapped.env, stdin=slave, capture_output=True,
                              timeout=30, start_new_session=True)
        os.set_blocking(slave, False)
        try:
            queued = os.read(slave, 100)
        except BlockingIOError:
            queued = b""
    finally:
        os.close(master)
        os.close(slave)
    assert proc.stdout.count(b"refused") == 2, proc.stdout
    assert b"injected" not in proc.stdout and queued == b""


def test_the_process_count_is_limited_inside(workdir, cleanup):
    need_bwrap()
    rt = sandboxed_runtime(workdir)
    cleanup(rt)
    out = Shell(rt)("ulimit -u; ulimit -Hu; ulimit -u unlimited && echo raised")
    lines = out.content.splitlines()
    assert lines[0].isdigit() and lines[0] == lines[1]
    assert "raised" not in out.content  # the hard limit cannot be lifted again
