"""A zygote of release servers: ``python -m privbench.learners.zygote SOCKET``.

A release server (:mod:`privbench.learners.serve`) must start clean: no bench module, nothing a
training or another case left behind.  Started as a fresh interpreter, each one pays torch's
import (about 1.5 s of CPU); a run's workers, each with its evaluator's server, and every case that
needs a server of its own (a plug-in's modules, the two-user protocol) would pay it again.  This
process imports what a server imports before its first request (torch, numpy, the learners'
registry: never a bench module, never a plug-in, and it never releases or loads anything), then
listens on the Unix socket ``SOCKET``; for each connection it forks one release server, which so
starts clean with those imports done.

Protocol: the client sends one JSON object ``{"parent": pid, "threads": n}`` with two file
descriptors (``socket.send_fds``): the read end of its request pipe and the write end of its reply
pipe; the zygote forks, answers ``{"pid": child}`` and closes its copies.  The child serves those
pipes exactly as ``python -m privbench.learners.serve`` serves its stdin and stdout (the
``parent`` it exits with is the client, which is not its parent process: it watches that pid).
Requests are plain JSON, never pickles, so a connecting process can only ask for a clean server.
The zygote prints ``ready`` once listening and exits when its parent (the run) exits.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import threading
import time

#: Most bytes of a request (a JSON object of two integers).
MAX_REQUEST = 256


def watch_pid(pid: int) -> None:
    """Exit (code 3) once process ``pid`` has exited: a pidfd where the kernel has them, else a poll."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        select.select([fd], [], [])
        os._exit(3)
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(3)
        except PermissionError:
            pass
        time.sleep(0.5)


def reap() -> None:
    """Wait for every forked server as it exits (so that no zombie is left and its CPU time is accounted)."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            time.sleep(0.2)


def server_child(fds: list[int], parent: int, threads: int) -> None:  # pragma: no cover - a forked child
    """In a forked child: serve the request pipe ``fds[0]`` and the reply pipe ``fds[1]`` until their end."""
    from .serve import serve_requests

    lo, hi = sorted(fds)  # nothing of the zygote's (its listening socket, its stdout to the run) stays open
    os.closerange(3, lo)
    os.closerange(lo + 1, hi)
    os.closerange(hi + 1, 65536)
    serve_requests(os.fdopen(fds[0], "rb"), os.fdopen(fds[1], "wb"), parent, threads, watch=watch_pid)


def serve_forks(listener: socket.socket) -> None:  # pragma: no cover - exercised through the bench's runs
    """Fork one release server per connection, forever."""
    while True:
        conn, _ = listener.accept()
        fds: list[int] = []
        try:
            msg, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, 2)
            req = json.loads(msg)
            parent, threads = int(req["parent"]), int(req["threads"])
            if len(fds) != 2 or threads < 1:
                raise ValueError("a request needs two file descriptors and threads >= 1")
        except (OSError, ValueError, KeyError, TypeError):
            for fd in fds:
                os.close(fd)
            conn.close()
            continue
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                listener.close()
                conn.close()
                server_child(fds, parent, threads)
                code = 0
            finally:
                os._exit(code)
        for fd in fds:
            os.close(fd)
        try:
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        except OSError:
            pass
        conn.close()


def main() -> None:  # pragma: no cover - exercised through the bench's runs
    import numpy  # noqa: F401
    import torch  # noqa: F401

    from . import registry  # noqa: F401 - what serve_requests imports before its ready line
    from .serve import private_stdout, watch_parent

    out = private_stdout()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    threading.Thread(target=reap, daemon=True).start()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sys.argv[1])
    listener.listen(16)
    out.write(b"ready\n")
    out.flush()
    serve_forks(listener)


if __name__ == "__main__":  # pragma: no cover
    main()
