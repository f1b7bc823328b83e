"""Inside the sandbox: bridge 127.0.0.1:3128 to the host proxy's unix socket, run the command.

Run as `python -I -S forwarder.py -- ARGV...` by bubblewrap (no site packages, standard
library only: it must start in milliseconds). Each TCP connection from the command's
HTTP(S)_PROXY is piped to /tmp/.agent-cli-proxy.sock, which the host proxy serves; the exit
code is the command's. The network namespace has no other way out.
"""

import os
import signal
import socket
import subprocess
import sys
import threading

PORT = 3128
SOCKET = "/tmp/.agent-cli-proxy.sock"


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def bridge(conn):
    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        up.connect(SOCKET)
    except OSError:
        conn.close()
        return
    back = threading.Thread(target=pipe, args=(up, conn), daemon=True)
    back.start()
    pipe(conn, up)
    back.join()
    conn.close()
    up.close()


def serve(listener):
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=bridge, args=(conn,), daemon=True).start()


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", PORT))
    listener.listen(64)
    threading.Thread(target=serve, args=(listener,), daemon=True).start()
    child = subprocess.Popen(argv)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda num, _frame: child.send_signal(num))
    code = child.wait()
    sys.stdout.flush()
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
