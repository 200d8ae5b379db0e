"""One case in a fresh child process, killed on timeout: ``python -m privbench.bench.backends.isolated``.

Works from daemonic processes (Dask workers), unlike ``multiprocessing``.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time


from ..execute import execute_case
from ..records import Record, failure_rows, now
from ..suites import Case
from .common import init_worker


def run_isolated(case: Case, device: str = "auto", timeout: float | None = None,
                 startup_limit: float = 600.0, artifacts: str | None = None) -> list[Record]:
    """Run one case in a fresh child process (``python -m privbench.bench.backends.isolated``), killed on timeout.

    The timeout counts from when the child starts the case (after its imports).
    Works from daemonic processes (Dask workers), unlike ``multiprocessing``.
    """
    import select
    import tempfile

    started, t0 = now(), time.perf_counter()
    with tempfile.NamedTemporaryFile(prefix="privbench-case-", suffix=".pkl", delete=False) as fh:
        pickle.dump((case, device, os.getpid(), artifacts), fh)
    try:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # same imports as here
        proc = subprocess.Popen([sys.executable, "-m", "privbench.bench.backends.isolated", fh.name], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        ready, _, _ = select.select([proc.stdout], [], [], startup_limit)
        if not ready or proc.stdout.read(1) != b"\x01":  # type: ignore[union-attr]
            proc.kill()
            _, err = proc.communicate()
            return failure_rows(case, "failed", f"worker process did not start: {_tail(err)}", started,
                                time.perf_counter() - t0, str(device))
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return failure_rows(case, "timeout", f"exceeded the per-case timeout of {timeout:g} s (killed)",
                                started, time.perf_counter() - t0, str(device))
    finally:
        os.unlink(fh.name)
    if proc.returncode != 0 or not out:
        return failure_rows(case, "failed", f"worker process exited with code {proc.returncode}: {_tail(err)}",
                            started, time.perf_counter() - t0, str(device))
    return pickle.loads(out)


def _tail(err: bytes) -> str:
    return " ".join(err.decode(errors="replace").split()[-40:])


def _child_main(path: str) -> None:  # pragma: no cover - exercised through run_isolated
    with open(path, "rb") as fh:
        case, device, parent, artifacts = pickle.load(fh)
    init_worker(parent, 1)
    out = sys.stdout.buffer
    out.write(b"\x01")
    out.flush()
    rows = execute_case(case, device, artifacts)
    out.write(pickle.dumps(rows))
    out.flush()


if __name__ == "__main__":  # pragma: no cover
    _child_main(sys.argv[1])
