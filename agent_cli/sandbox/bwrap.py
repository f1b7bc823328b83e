"""The bubblewrap command line for one sandboxed command (Linux), and whether bwrap works here.

The whole filesystem is bound read-only, /tmp is a fresh tmpfs, /dev and /proc are new
(the PID namespace's own /proc: no other process is visible), then the boundary's writable
places are bound read-write, its protected paths read-only again over them, its hidden
paths covered (a directory by an empty tmpfs, a file by /dev/null). Deeper mounts go later,
so a teammate's worktree under the read-only `.agent-cli/` stays writable. Namespaces: PID,
network (none, or only the proxy's socket), IPC, UTS, cgroup; a new session (no TIOCSTI
into the user's terminal); every capability dropped (bubblewrap also sets no-new-privileges);
the command dies with agent-cli. Inside, `ulimit -u` caps the process count. A workdir
under /tmp is bound back (read-only) over the private /tmp, so a teammate still sees it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .boundary import Boundary

PROXY_PORT = 3128  # the in-sandbox forwarder listens on 127.0.0.1:PROXY_PORT
PROXY_SOCKET = "/tmp/.agent-cli-proxy.sock"  # the host proxy's socket, inside (private /tmp)
EXTRA_PROCS = 1024  # processes a command may add to what is running now
INSTALL_HINT = "sudo apt-get install bubblewrap"


@dataclass(frozen=True)
class Availability:
    ok: bool
    why: str = ""  # why not, in one line
    fix: str = ""  # the one command that installs what is missing


def probe(bwrap: str | None = None) -> Availability:
    """Whether bubblewrap can build a sandbox here (it is installed and user namespaces
    work): one real `bwrap ... true`."""
    import sys

    if sys.platform.startswith("win"):
        return Availability(False, "the sandbox is not supported on Windows")
    if sys.platform == "darwin":
        from .seatbelt import probe_seatbelt

        return probe_seatbelt()
    if not sys.platform.startswith("linux"):
        return Availability(False, f"no sandbox on {sys.platform} (Linux uses bubblewrap)")
    path = bwrap or shutil.which("bwrap")
    if path is None:
        return Availability(False, "bubblewrap (bwrap) is not installed", INSTALL_HINT)
    try:
        proc = subprocess.run(
            [path, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--new-session",
             "--die-with-parent", "--cap-drop", "ALL", "--proc", "/proc", "--dev", "/dev",
             "true"],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(False, f"bwrap did not run: {exc}")
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        hint = (" (user namespaces are off: sysctl kernel.unprivileged_userns_clone=1)"
                if err and "namespace" in err[-1].lower() else "")
        return Availability(False, f"bwrap failed: {err[-1] if err else proc.returncode}{hint}")
    return Availability(True)


def _depth(path: Path) -> int:
    return len(path.parts)


def process_limit() -> int:
    """The RLIMIT_NPROC for a command: every thread running now plus EXTRA_PROCS (the
    limit counts all of the user's processes, not the sandbox's alone)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            total = int(fh.read().split()[3].split("/")[1])
    except (OSError, ValueError, IndexError):
        total = 4096
    return total + EXTRA_PROCS


def bwrap_argv(box: Boundary, command: str, cwd: Path, *, bwrap: str = "bwrap",
               proxy_socket: Path | None = None, forwarder: list[str] | None = None) -> list[str]:
    """argv running `bash -c command` in `cwd` inside `box`. With `proxy_socket`, the
    host proxy's socket is bound at PROXY_SOCKET and `forwarder` (argv) is run first to
    bridge 127.0.0.1:PROXY_PORT to it."""
    argv = [bwrap, "--ro-bind", "/", "/", "--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc",
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--new-session", "--die-with-parent", "--cap-drop", "ALL"]
    mounts = ([(p, "--ro-bind") for p in box.visible] + [(p, "--bind") for p in box.writable]
              + [(p, "--ro-bind") for p in box.readonly])
    for path, how in sorted(mounts, key=lambda m: _depth(m[0])):  # stable: in that order
        argv += [how, str(path), str(path)]
    for path in box.hidden:
        if path.is_dir():
            argv += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            argv += ["--ro-bind", "/dev/null", str(path)]
    if proxy_socket is not None:
        argv += ["--bind", str(proxy_socket), PROXY_SOCKET]
    argv += ["--chdir", str(cwd), "--"]
    # On the command's own first line (line numbers in its errors stay right), one exec less.
    inner = f"ulimit -u {process_limit()} 2>/dev/null || exit 126; {command}"
    if forwarder:
        return [*argv, *forwarder, "--", "bash", "-c", inner]
    return [*argv, "bash", "-c", inner]


def sandbox_env(base: dict[str, str] | None = None, proxied: bool = False,
                tmpdir: str = "/tmp", port: int = PROXY_PORT) -> dict[str, str]:
    """The environment inside: the user's, without agent-cli's API key, its board URL and
    the SSH agent, TMPDIR on the private /tmp and, with a proxy, every *_PROXY variable
    pointing at it."""
    env = dict(os.environ if base is None else base)
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "SSH_AUTH_SOCK",
                 "AGENT_CLI_BOARD"):
        env.pop(name, None)
    env["TMPDIR"] = tmpdir
    env["AGENT_CLI_SANDBOX"] = "1"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        env.pop(name, None)
        env.pop(name.lower(), None)
    if proxied:
        url = f"http://127.0.0.1:{port}"
        for name in ("HTTP_PROXY", "HTTPS_PROXY"):
            env[name] = env[name.lower()] = url
    return env
