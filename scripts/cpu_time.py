"""CPU time of a command and every process it starts: ``python scripts/cpu_time.py privbench run ...``.

Prints ``wall user system`` (seconds).  ``/usr/bin/time`` counts only the descendants that were waited
for; a local run's forkserver (and its workers) outlives the run's process and is never waited for by
it, so this wrapper makes itself a child subreaper (Linux ``prctl``), waits for every orphan after the
command exits, and reports its children's total user and system time.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def main() -> None:
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    t0 = time.time()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.time() - t0
    while True:  # the orphans (a forkserver, a zygote) are ours now: wait for all of them
        try:
            os.wait()
        except ChildProcessError:
            break
    t = os.times()
    print(f"{wall:.2f} {t.children_user:.2f} {t.children_system:.2f}")


if __name__ == "__main__":
    main()
