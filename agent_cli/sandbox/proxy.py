"""The filtering HTTP(S) proxy behind `network.allowedDomains`, running outside the sandbox.

A sandboxed command has no network; its HTTP(S)_PROXY points at the in-sandbox forwarder
(forwarder.py), which hands each connection to a unix socket bound into the sandbox. Here,
outside, each command gets its own socket (a ProxySession, so a refused host is told to
that command's result), and each connection is one request: `CONNECT host:port` (HTTPS,
then bytes are piped both ways, never decrypted) or a plain `GET http://host/...` (sent on
with `Connection: close`). A host is let through when allowedDomains names it (`pypi.org`,
`*.github.com` for its subdomains, `127.0.0.1:8000` for that port only), when the human
allowed it, or when `ask(host)` says so (the REPL asks the first time; headless: no).

Why not a library: proxy.py runs its plugins in acceptor processes, away from this
process's approval broker; mitmproxy intercepts TLS and brings dozens of dependencies;
pproxy routes by regex without a per-request callback. What is needed is ~200 lines of
threads and sockets from the standard library.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HEAD_CAP = 64 * 1024
CONNECT_TIMEOUT_S = 15.0
Ask = Callable[[str], str]  # host -> "once" | "always" | "deny"


def domain_allowed(host: str, port: int, patterns: list[str] | tuple[str, ...]) -> bool:
    """Does an allowedDomains list let `host:port` through?"""
    host = host.lower().rstrip(".")
    for raw in patterns:
        pattern = raw.lower().strip().rstrip(".")
        want_port = None
        if pattern.count(":") == 1:  # host:port (an IPv6 literal has several colons)
            pattern, _, p = pattern.partition(":")
            want_port = int(p) if p.isdigit() else -1
        if want_port is not None and want_port != port:
            continue
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]) and host != pattern[2:]:
                return True
        elif host == pattern:
            return True
    return False


def parse_head(head: bytes) -> tuple[str, str, int, bytes] | None:
    """(method, host, port, the request to send upstream) from a proxy request head;
    None when it is not one this proxy serves."""
    try:
        text = head.decode("latin-1")
        line, _, rest = text.partition("\r\n")
        method, target, version = line.split(" ")
    except ValueError:
        return None
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        if not host or not port.isdigit():
            return None
        return method, host.strip("[]"), int(port), b""
    if not target.startswith("http://"):
        return None
    hostport, slash, path = target[len("http://"):].partition("/")
    host, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "80")
    if not host or not port.isdigit():
        return None
    headers = [h for h in rest.split("\r\n") if h and not h.lower().startswith(
        ("connection:", "proxy-connection:", "keep-alive:"))]
    upstream = f"{method} {slash}{path} {version}\r\n" + "".join(h + "\r\n" for h in headers)
    upstream += "Connection: close\r\n\r\n"
    return method, host.strip("[]"), int(port), upstream.encode("latin-1")


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


@dataclass
class ProxySession:
    """One command's socket and what it was refused."""

    proxy: DomainProxy
    path: Path | None  # the unix socket (Linux), or None: a TCP port on localhost (macOS)
    listener: socket.socket
    blocked: list[str] = field(default_factory=list)
    allowed_once: set[str] = field(default_factory=set)
    asking: dict[str, threading.Event] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        if self.path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    @property
    def port(self) -> int:
        """The localhost port of a TCP session (macOS: no network namespace to bridge)."""
        return int(self.listener.getsockname()[1]) if self.path is None else 0

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < HEAD_CAP:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            end = head.find(b"\r\n\r\n") + 4
            request, extra = head[:end], head[end:]
            parsed = parse_head(request)
            if parsed is None:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
                return
            method, host, port, upstream_head = parsed
            if not host.isprintable() or len(host) > 253:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
                return
            if not self._permitted(host, port):
                with self.lock:
                    if host not in self.blocked:
                        self.blocked.append(host)
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n"
                             b"agent-cli sandbox: " + host.encode("ascii", "replace")
                             + b" is not in sandbox.network.allowedDomains\n")
                return
            try:
                up = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
            except OSError as exc:
                conn.sendall(f"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n{exc}\n"
                             .encode())
                return
            with up:
                up.settimeout(None)
                if method == "CONNECT":
                    conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                else:
                    up.sendall(upstream_head)
                if extra:
                    up.sendall(extra)
                back = threading.Thread(target=_pipe, args=(up, conn), daemon=True)
                back.start()
                _pipe(conn, up)
                back.join()

    def _permitted(self, host: str, port: int) -> bool:
        """Allowed by the patterns, or by the human: one question per host and command,
        however many connections wait for it (no lock is held while asking)."""
        if self.proxy.allows(host, port):
            return True
        key = host.lower()
        with self.lock:
            if key in self.allowed_once:
                return True
            if host in self.blocked:
                return False
            pending = self.asking.get(key)
            mine = pending is None
            if pending is None:
                pending = self.asking[key] = threading.Event()
        if not mine:
            pending.wait()
            with self.lock:
                return key in self.allowed_once
        answer = self.proxy.ask(host) if self.proxy.ask is not None else "deny"
        if answer == "always":
            self.proxy.add(host)
        ok = answer in ("once", "always")
        with self.lock:
            if ok:
                self.allowed_once.add(key)
            elif host not in self.blocked:
                self.blocked.append(host)
            pending.set()
        return ok


class DomainProxy:
    """The session's proxy: the allowed patterns (plus what the human added) and a private
    directory for the per-command sockets."""

    def __init__(self, domains: tuple[str, ...] | list[str], ask: Ask | None = None) -> None:
        self._domains = list(domains)
        self._lock = threading.Lock()
        self.ask = ask
        self.dir = Path(tempfile.mkdtemp(prefix="agent-cli-proxy-"))
        os.chmod(self.dir, 0o700)
        self._count = 0

    def allows(self, host: str, port: int) -> bool:
        with self._lock:
            patterns = list(self._domains)
        return domain_allowed(host, port, patterns)

    def add(self, host: str) -> None:
        with self._lock:
            if host not in self._domains:
                self._domains.append(host)

    def session(self, tcp: bool = False) -> ProxySession:
        """A new socket for one command, served until `close()`: a unix socket bound into
        the sandbox (Linux), or with `tcp` a port on 127.0.0.1 (macOS, where the sandbox
        shares the host's network and its profile allows that one port)."""
        path: Path | None = None
        if tcp:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", 0))
        else:
            with self._lock:
                self._count += 1
                path = self.dir / f"s{self._count}.sock"
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(str(path))
        listener.listen(64)
        session = ProxySession(self, path, listener)
        threading.Thread(target=session.serve, daemon=True, name="sandbox-proxy").start()
        return session

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
