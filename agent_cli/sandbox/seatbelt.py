"""The macOS sandbox: a `sandbox-exec` (Seatbelt) profile generated from a Boundary.

`sandbox/manager.py` runs every sandboxed command through it on macOS (`wrap_macos`): a
private temporary directory per command (TMPDIR), and with allowedDomains the filtering
proxy on one localhost port the profile allows. Its text is tested everywhere; running it
is tested where macOS is. Rules are applied in order and the last one that matches wins, so
each allowance is followed by the denials it must not override:
- everything is allowed, then every write is denied, then the boundary's writable places
  (and the devices a shell writes: /dev/null, /dev/tty, /dev/std*) are allowed, then its
  read-only paths (.git, .agent-cli, .tasks, .team, ...) are denied again;
- the hidden paths are denied reading;
- all network is denied; with allowedDomains, only the proxy's port on localhost is
  allowed (the proxy runs outside, as on Linux); allowLocalBinding lets a command serve on
  localhost;
- signals and process information reach only processes of the same sandbox.
Windows has no sandbox at all: agent-cli says so and the normal gate applies.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from .boundary import Boundary
from .bwrap import Availability

SANDBOX_EXEC = "/usr/bin/sandbox-exec"

DEVICES = ("/dev/null", "/dev/zero", "/dev/tty", "/dev/stdout", "/dev/stderr", "/dev/dtracehelper")


class ProfileError(ValueError):
    """A path that cannot be written into a profile safely (a newline or NUL in it)."""


def quote(path: Path | str) -> str:
    """A Seatbelt string literal."""
    text = str(path)
    if "\n" in text or "\x00" in text or "\r" in text:
        raise ProfileError(f"path cannot be used in a sandbox profile: {text!r}")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _rule(action: str, op: str, filters: list[str]) -> list[str]:
    if not filters:
        return []
    return [f"({action} {op}", *[f"  {f}" for f in filters], ")"]


def profile(box: Boundary, tmpdir: Path, proxy_port: int | None = None,
            allow_local_binding: bool = False) -> str:
    """The profile text for one command of the agent whose boundary is `box`; `tmpdir`
    its private temporary directory (TMPDIR)."""
    writable = [f"(subpath {quote(p)})" for p in [*box.writable, tmpdir]]
    writable += [f"(literal {quote(d)})" for d in DEVICES]
    lines = ["(version 1)", "(allow default)", "(deny file-write*)"]
    lines += _rule("allow", "file-write*", writable)
    lines += _rule("deny", "file-write*", [f"(subpath {quote(p)})" for p in box.readonly])
    lines += _rule("deny", "file-read*", [f"(subpath {quote(p)})" for p in box.hidden])
    lines += ["(deny network*)"]
    if proxy_port is not None:
        lines += [f'(allow network-outbound (remote ip "localhost:{int(proxy_port)}"))']
    if allow_local_binding:
        lines += ['(allow network-bind (local ip "localhost:*"))',
                  '(allow network-inbound (local ip "localhost:*"))',
                  '(allow network-outbound (remote ip "localhost:*"))']
    lines += ["(deny signal)", "(allow signal (target same-sandbox))",
              "(deny process-info*)", "(allow process-info* (target same-sandbox))"]
    return "\n".join(lines) + "\n"


def seatbelt_argv(box: Boundary, command: str, tmpdir: Path,
                  proxy_port: int | None = None) -> list[str]:
    """argv running `bash -c command` under the profile with /usr/bin/sandbox-exec."""
    return [SANDBOX_EXEC, "-p", profile(box, tmpdir, proxy_port), "bash", "-c", command]


def probe_seatbelt() -> Availability:
    """Whether sandbox-exec can confine a command here: one real run of `true`."""
    if shutil.which(SANDBOX_EXEC) is None:
        return Availability(False, f"{SANDBOX_EXEC} is missing")
    try:
        proc = subprocess.run([SANDBOX_EXEC, "-p", "(version 1)(allow default)", "true"],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(False, f"sandbox-exec did not run: {exc}")
    if proc.returncode != 0:
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        return Availability(False, f"sandbox-exec failed: {why[-1] if why else proc.returncode}")
    return Availability(True)


def private_tmpdir() -> Path:
    """A fresh temporary directory for one command (removed when it ends)."""
    return Path(tempfile.mkdtemp(prefix="agent-cli-sbx-"))
