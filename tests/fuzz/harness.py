"""The fuzz suite's harness: run one hostile ``privbench`` invocation and judge it.

An invocation runs in-process (``privbench.bench.cli.main``) inside a sandbox
directory (the working directory during the call), with stdout and stderr
captured and a SIGALRM watchdog (:data:`HANG_S`).  It is *clean* when:

- it exits with the expected status (2 for bad input, unless told otherwise),
- stderr holds exactly one line, ``privbench...: error: ...``, naming one of the
  given tokens when the strategy knows the bad value,
- no exception escaped ``main`` (a traceback),
- it ended within :data:`HANG_S` seconds,
- no file that existed in the sandbox before was changed or removed (*lost*),
  and no file was created outside the invocation's own output directory.

Sizes (environment):

- ``PRIVBENCH_FUZZ_EXAMPLES``: examples over the whole fuzz suite (default 320,
  the CI size); split evenly between the categories.  ``2000`` or more is the
  slow mode of the README.
- ``PRIVBENCH_FUZZ_LOG=FILE``: append one JSON line per invocation (category,
  outcome) to FILE; ``python tests/fuzz/table.py FILE`` prints the table.
- ``PRIVBENCH_FUZZ_KEEP_GOING=1``: record outcomes without failing (to count
  every problem of a slow run instead of stopping at the first).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import signal
import sys
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from hypothesis import HealthCheck, settings

HANG_S = 60
WEIGHTS = 14  # the weights of the fuzz tests, summed (each 1 but generated values 3, generated file values 2)


def examples(weight: int = 1) -> int:
    """Examples for one fuzz category of ``weight`` (a share of ``PRIVBENCH_FUZZ_EXAMPLES``)."""
    total = int(os.environ.get("PRIVBENCH_FUZZ_EXAMPLES", "320"))
    return max(10, total * weight // WEIGHTS)


def fuzz_settings(weight: int = 1) -> settings:
    """Derandomized (same examples on every run), no deadline (a run may take seconds), no database."""
    return settings(max_examples=examples(weight), derandomize=True, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck), print_blob=True)


class Hang(Exception):
    """Raised by the watchdog."""


@dataclass
class Outcome:
    category: str
    argv: list[str]
    rc: Any = None
    stderr: str = ""
    traceback: str = ""
    hang: bool = False
    lost: list[str] = field(default_factory=list)
    stray: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def clean(self) -> bool:
        return not self.problems


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> sha1 of its bytes; device nodes and the like by kind)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = Path(dirpath, name)
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_file():
                out[rel] = hashlib.sha1(p.read_bytes()).hexdigest()
            else:
                out[rel] = f"special:{p.lstat().st_mode:o}"
    return out


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang()


def invoke(category: str, argv: Sequence[str], sandbox: Path, *, out: str | None = None, rc: int = 2,
           names: Sequence[str] = (), note: str = "") -> Outcome:
    """Run ``privbench argv`` in ``sandbox`` and judge it (see the module docstring).

    ``out``: the invocation's own output directory (relative to the sandbox), where
    new files are allowed; ``rc``: the expected exit status; ``names``: tokens of
    which at least one must appear in the error line.
    """
    from privbench.bench.cli import main

    o = Outcome(category, [str(a) for a in argv], note=note)
    before = snapshot(sandbox)
    err, std = io.StringIO(), io.StringIO()
    old_path, old_pythonpath = list(sys.path), os.environ.get("PYTHONPATH")
    old_cwd, old_handler = os.getcwd(), signal.signal(signal.SIGALRM, _on_alarm)
    os.chdir(sandbox)
    signal.alarm(HANG_S)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(std):
            try:
                o.rc = main(o.argv)
            except SystemExit as exc:
                o.rc = exc.code
    except Hang:
        o.hang = True
    except BaseException:  # noqa: BLE001 - that is what the fuzz suite looks for
        o.traceback = traceback.format_exc(limit=-3)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old_handler)
        os.chdir(old_cwd)
        sys.path[:] = old_path
        if old_pythonpath is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_pythonpath
    o.stderr = err.getvalue()
    judge(o, before, snapshot(sandbox), out, rc, names)
    record(o)
    return o


def judge(o: Outcome, before: dict[str, str], after: dict[str, str], out: str | None, rc: int,
          names: Sequence[str]) -> None:
    """Fill ``o.problems``."""
    o.lost = sorted(k for k, v in before.items() if after.get(k) != v)
    own = (out.rstrip("/") + "/") if out else None
    o.stray = sorted(k for k in after if k not in before and not (own and (k + "/").startswith(own)))
    lines = [ln for ln in o.stderr.splitlines() if ln.strip()]
    if o.hang:
        o.problems.append("hang")
    elif o.traceback:
        o.problems.append("traceback")
    elif o.rc != rc:
        o.problems.append(f"exit {o.rc!r}, expected {rc}")
    if o.lost:
        o.problems.append(f"lost {o.lost[:3]}")
    if o.stray:
        o.problems.append(f"stray files {o.stray[:3]}")
    if rc == 2 and not o.hang and not o.traceback:
        if len(lines) != 1 or "error" not in lines[0] or "Traceback" in o.stderr:
            o.problems.append(f"stderr is not one error line: {o.stderr[-300:]!r}")
        elif names and not any(variant in lines[0] for n in names for variant in spellings(str(n))):
            o.problems.append(f"error line names none of {list(names)}: {lines[0]!r}")


def spellings(name: str) -> set[str]:
    """A name as the error line may spell it: ``--n-train``, ``n-train``, ``n_train``."""
    bare = name.lstrip("-")
    return {name, bare, bare.replace("-", "_")} - {""}


@contextlib.contextmanager
def sandbox():
    """A fresh, empty directory for one example (removed afterwards)."""
    import shutil
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="privbench-fuzz-"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def record(o: Outcome) -> None:
    """Append ``o`` to ``PRIVBENCH_FUZZ_LOG`` (when set)."""
    log = os.environ.get("PRIVBENCH_FUZZ_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({**asdict(o), "clean": o.clean}, default=str) + "\n")


def check(o: Outcome) -> None:
    """Fail the test on a problem (unless ``PRIVBENCH_FUZZ_KEEP_GOING``)."""
    if o.problems and not os.environ.get("PRIVBENCH_FUZZ_KEEP_GOING"):
        raise AssertionError(f"{o.category} {o.note}: privbench {' '.join(o.argv)!r}: {'; '.join(o.problems)}\n"
                             f"stderr: {o.stderr[-2000:]}\n{o.traceback}")


def api_outcome(category: str, what: str, fn: Any, *args: Any) -> Outcome:
    """Call a Python API function on hostile input: clean iff it raises InputError with a one-line message."""
    from privbench.datasets.errors import InputError

    o = Outcome(category, [what])
    old_handler = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(HANG_S)
    try:
        fn(*args)
        o.rc = 0
    except InputError as exc:
        o.rc, o.stderr = 2, str(exc)
    except Hang:
        o.hang = True
    except BaseException:  # noqa: BLE001
        o.traceback = traceback.format_exc(limit=-3)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old_handler)
    if o.hang:
        o.problems.append("hang")
    elif o.traceback:
        o.problems.append("traceback")
    elif o.rc != 2:
        o.problems.append("accepted")
    elif "\n" in o.stderr.strip() or not o.stderr.strip():
        o.problems.append(f"message is not one line: {o.stderr[:300]!r}")
    record(o)
    return o
