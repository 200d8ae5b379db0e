"""Release servers forked from a clean zygote (:mod:`privbench.learners.zygote`) instead of started fresh.

The local backend starts one zygote per run (:class:`Zygote`, before its workers) and hands its socket
to every worker (:func:`use_zygote`); a :class:`~privbench.bench.remote_release.ReleaseServer` made in
that worker or in its evaluator then asks the zygote for a server (:func:`fork_server`), which starts
with torch imported and nothing else done, instead of importing torch again (about 1.5 s of CPU per
server).  Without a zygote (another backend, ``privbench check``, a library call), or when it cannot be
reached, a server is a fresh interpreter as before: the releases are the same either way.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

from .forked_child import PolledProcess

#: The socket of this process's zygote (:func:`use_zygote`), or None: fresh servers.
ADDRESS: list[str | None] = [None]
#: Seconds a client waits for a zygote still importing (it listens once its imports are done).
CONNECT_WAIT = 20.0


def use_zygote(address: str | None) -> None:
    """Make the release servers of this process (and of the processes it forks) come from ``address``."""
    ADDRESS[0] = address


class Zygote:
    """A running ``python -m privbench.learners.zygote`` and the socket it listens on (a private directory)."""

    def __init__(self) -> None:
        self.dir = tempfile.TemporaryDirectory(prefix="privbench-zygote-")
        self.address = os.path.join(self.dir.name, "socket")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self.proc = subprocess.Popen([sys.executable, "-m", "privbench.learners.zygote", self.address], env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.dir.cleanup()


class ZygoteChild(PolledProcess):
    """A release server forked by the zygote, with the part of :class:`subprocess.Popen`'s interface that
    :class:`~privbench.bench.remote_release.ReleaseServer` uses.  It is not this process's child: its exit
    is seen through a pidfd (or, without one, by signalling it), and its exit code is not known (-1)."""

    LABEL = "release server"

    def __init__(self, pid: int, stdin: Any, stdout: Any) -> None:
        self.pid, self.stdin, self.stdout = pid, stdin, stdout
        self.returncode: int | None = None
        try:
            self.pidfd: int | None = os.pidfd_open(pid)
        except ProcessLookupError:
            self.pidfd, self.returncode = None, -1
        except (AttributeError, OSError):
            self.pidfd = None

    def poll(self) -> int | None:
        if self.returncode is None:
            if self.pidfd is not None:
                gone = bool(select.select([self.pidfd], [], [], 0)[0])
            else:
                try:
                    os.kill(self.pid, 0)
                    gone = False
                except ProcessLookupError:
                    gone = True
            if gone:
                self.returncode = -1
                if self.pidfd is not None:
                    os.close(self.pidfd)
                    self.pidfd = None
        return self.returncode



def connect(address: str) -> socket.socket | None:
    """A connection to the zygote at ``address``, waiting up to :data:`CONNECT_WAIT` s for it to listen."""
    end = time.monotonic() + CONNECT_WAIT
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(address)
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            if time.monotonic() > end:
                return None
            time.sleep(0.02)
        except OSError:
            sock.close()
            return None


def fork_server(threads: int) -> ZygoteChild | None:
    """A release server forked by this process's zygote, serving two fresh pipes; None without a zygote."""
    if ADDRESS[0] is None:
        return None
    sock = connect(ADDRESS[0])
    if sock is None:
        return None
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    try:
        with sock:
            socket.send_fds(sock, [json.dumps({"parent": os.getpid(), "threads": int(threads)}).encode()],
                            [req_r, rep_w])
            line = sock.makefile("rb").readline()
        pid = int(json.loads(line)["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        for fd in (req_r, req_w, rep_r, rep_w):
            os.close(fd)
        return None
    os.close(req_r)
    os.close(rep_w)
    return ZygoteChild(pid, os.fdopen(req_w, "wb"), os.fdopen(rep_r, "rb"))
