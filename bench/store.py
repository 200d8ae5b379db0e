"""The results store: one long table per results directory, written atomically.

Layout of a results directory ``DIR``::

    DIR/privbench-results.json        marker: this is a privbench results directory
    DIR/records/part-<key>-<run>.parquet   one part per finished case (all its budgets)
    DIR/claims/<key>.lock             advisory locks of cases being computed (fcntl)
    DIR/runs/<run>.json               one manifest per run (command, suite, counts, times)

Every part is written to a hidden temporary file, flushed to disk, then renamed
(``os.replace``): a reader never sees half a part, and an interrupted run
(Ctrl-C, ``kill -9``) leaves only whole parts.  Part names carry the run id, so
two runs writing to one directory never overwrite each other; a case being
computed is locked (``fcntl.flock``, released by the kernel when its process
dies), so two runs resuming into one directory never compute it twice.

:func:`read_records` concatenates the parts into one table with the columns of
:data:`privbench.bench.records.COLUMNS` (one row per case id; a later successful attempt supersedes a
failed one).  A part that cannot be read is an :class:`InputError` naming the
file: never silently dropped.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import socket
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from privbench.datasets.errors import InputError
from privbench.datasets.files import make_default_mode
from privbench.datasets.vocabulary import STATUSES

from .parts import DIGEST_KEY, check_part_values, content_digest

#: A column added together with the seal: a part that has it was written sealed.
SEALED_SINCE = "mechanism_file"
from .records import BOOL, COLUMN_NAMES, COLUMNS, FLOAT, INT, STR, Record, now

MARKER = "privbench-results.json"
FORMAT = "privbench-results/1"

#: Columns every part must have (the identity of a row and what report and check read).
ESSENTIAL = ("case_id", "suite", "experiment", "scenario", "scenario_id", "observation", "privacy", "learner",
             "budget", "rep", "status", "error", "leakage", "distortion", "optimum_at_distortion", "gap",
             "overshoot", "started_at", "finished_at", "run_id")


def schema():
    """The pyarrow schema every part is written with (so the parts form one dataset)."""
    import pyarrow as pa

    types = {STR: pa.string(), FLOAT: pa.float64(), INT: pa.int64(), BOOL: pa.bool_()}
    return pa.schema([(name, types[t]) for name, t in COLUMNS])


def new_run_id() -> str:
    """A run id unique across processes and hosts: time, then random bits."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(4)


@dataclass
class Claim:
    """An advisory lock on a case; released by :meth:`release` or the process's death."""

    fd: int
    path: Path

    def release(self) -> None:
        if self.fd >= 0:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            finally:
                os.close(self.fd)
                self.fd = -1


class ResultsDir:
    """A privbench results directory (see the module docstring).

    Parameters
    ----------
    path : path-like
    create : bool
        Create it (and its marker) when missing or empty; otherwise it must exist.

    Raises
    ------
    InputError
        ``path`` is a file, a non-empty directory without the privbench marker
        (a foreign directory), has a broken marker, or cannot be written.
    """

    def __init__(self, path: str | os.PathLike, create: bool = True) -> None:
        self.path = Path(path)
        p = self.path
        if p.exists() and not p.is_dir():
            raise InputError(f"results directory {str(p)!r} is a file, not a directory")
        marker = p / MARKER
        if p.is_dir():
            # the marker is always created first (from a .tmp- file)
            entries = sorted(x.name for x in p.iterdir() if not x.name.startswith(".tmp-"))
            if entries and MARKER not in entries:
                raise InputError(f"{str(p)!r} is not a privbench results directory (it holds {entries[0]!r} "
                                 f"and no {MARKER}); choose a new or empty --out")
        if not p.exists() and not create:
            raise InputError(f"results directory {str(p)!r} does not exist")
        if marker.exists():
            self._check_marker(marker)
        if create:
            self._make_writable()

    # ------------------------------------------------------------------
    def _check_marker(self, marker: Path) -> None:
        try:
            data = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"results marker {str(marker)!r} is unreadable or corrupted ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"{str(marker)!r} is not a privbench results marker (format {FORMAT} expected)")

    def _make_writable(self) -> None:
        p = self.path
        try:
            p.mkdir(parents=True, exist_ok=True)
            self._create_marker()
            for sub in ("records", "claims", "runs"):
                (p / sub).mkdir(exist_ok=True)
            probe = tempfile.NamedTemporaryFile(dir=p / "records", prefix=".tmp-probe-", delete=True)
            probe.close()
        except OSError as exc:
            raise InputError(f"cannot write to results directory {str(p)!r} ({exc.strerror or exc})") from None

    def _create_marker(self) -> None:
        """Create the marker whole and exclusively (a hard link of a complete temporary file)."""
        marker = self.path / MARKER
        if marker.exists():
            return
        body = json.dumps({"format": FORMAT, "created_at": now(), "host": socket.gethostname()})
        tmp = _fsynced_temp(self.path, body)
        try:
            os.link(tmp, marker)
        except FileExistsError:  # another run created it first
            self._check_marker(marker)
        finally:
            os.unlink(tmp)

    @property
    def records_dir(self) -> Path:
        return self.path / "records"

    def parts(self, key: str | None = None) -> list[Path]:
        """Finished part files (of case ``key`` only, if given), sorted by name; temporaries excluded."""
        d = self.records_dir
        if not d.is_dir():
            return []
        pattern = f"part-{key}-*.parquet" if key else "*.parquet"
        return sorted(x for x in d.glob(pattern) if not x.name.startswith((".", "_")))

    def statuses(self, key: str | None = None) -> dict[str, str]:
        """case_id -> best status stored (``ok`` beats ``failed``/``timeout``); of case ``key`` if given."""
        out: dict[str, str] = {}
        for part in self.parts(key):
            tab = _read_part(part)  # whole: a corrupted part is refused before a run adds to the directory
            for cid, st in zip(tab.column("case_id").to_pylist(), tab.column("status").to_pylist()):
                if out.get(cid) != "ok":
                    out[cid] = st
        return out

    # ------------------------------------------------------------------
    def claim(self, key: str) -> Claim | None:
        """Lock case ``key`` for this process; None when another live process holds it."""
        path = self.path / "claims" / f"{key}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return Claim(fd, path)

    def write(self, rows: list[Record], key: str, run_id: str) -> Path:
        """Write one case's Records as a new part, atomically; returns its path."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist([_conform(r) for r in rows], schema=schema())
        table = table.replace_schema_metadata({DIGEST_KEY: content_digest(table)})
        final = self.records_dir / f"part-{key}-{run_id}.parquet"
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".tmp-{os.getpid()}-", suffix=".parquet", dir=self.records_dir)
            try:
                make_default_mode(fd)  # 0644 under umask 022, not mkstemp's 0600
                with os.fdopen(fd, "wb") as fh:
                    pq.write_table(table, fh, write_page_checksum=True)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, final)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError as exc:  # a full disk: name the directory (fsync's error names no file)
            raise OSError(exc.errno, exc.strerror or str(exc), str(self.records_dir)) from None
        _fsync_dir(self.records_dir)
        return final

    def write_manifest(self, run_id: str, info: dict[str, Any]) -> None:
        """Write (or update) this run's manifest ``runs/<run_id>.json`` atomically."""
        try:
            atomic_write_text(self.path / "runs" / f"{run_id}.json", json.dumps(info, indent=1, default=str))
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror or str(exc), str(self.path / "runs")) from None

    def clean_stale_temporaries(self) -> int:
        """Remove ``.tmp-<pid>-*`` files left by dead processes of this host; returns the count."""
        n = 0
        for x in self.records_dir.glob(".tmp-*"):
            parts = x.name.split("-")
            if len(parts) > 2 and parts[1].isdigit() and not _alive(int(parts[1])):
                try:
                    x.unlink()
                    n += 1
                except OSError:
                    pass
        return n


def read_records(path: str | os.PathLike, all_attempts: bool = False):
    """The long table of a results directory as a pandas DataFrame (columns :data:`COLUMN_NAMES`).

    Parameters
    ----------
    path : path-like
        A results directory.
    all_attempts : bool
        Keep every stored attempt; by default one row per ``case_id``: an ``ok``
        row beats a failed or timed-out one, then the latest ``finished_at``.

    Raises
    ------
    InputError
        Not a results directory, or a corrupted part (named).
    """
    import pyarrow as pa

    store = ResultsDir(path, create=False)
    tables = [_read_part(p) for p in store.parts()]
    if not tables:
        return schema().empty_table().to_pandas()
    df = pa.concat_tables(tables).to_pandas()
    if all_attempts or df.empty:
        return df.reset_index(drop=True)
    rank = (df["status"] != "ok").astype(int)
    order = df.assign(_rank=rank).sort_values(["_rank", "finished_at", "run_id"], ascending=[True, False, True],
                                              kind="stable")
    out = order.drop_duplicates("case_id", keep="first").drop(columns="_rank")
    return out.sort_values(["started_at", "case_id"], kind="stable").reset_index(drop=True)


def read_manifests(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The run manifests of a results directory (``runs/*.json``, see :meth:`ResultsDir.write_manifest`),
    in file-name order (oldest first); unreadable ones are skipped."""
    out = []
    for f in sorted(Path(path, "runs").glob("*.json")):
        try:
            out.append(json.loads(f.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return out


def export_csv(path: str | os.PathLike, csv_path: str | os.PathLike) -> Path:
    """Write the results table of ``path`` to ``csv_path`` (atomically); returns the CSV path."""
    df = read_records(path)
    out = Path(csv_path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out, df.to_csv(index=False))
    except OSError as exc:
        raise InputError(f"cannot write CSV file {str(out)!r} ({exc.strerror or exc})") from None
    return out


# --------------------------------------------------------------------------


def _read_part(path: Path, columns: list[str] | None = None):
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
        missing = [c for c in (*ESSENTIAL, *(columns or ())) if c not in names]
        tab = None if missing else pq.read_table(path, columns=columns, page_checksum_verification=True)
    except Exception as exc:  # noqa: BLE001 - any failure to parse is a corrupted file
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"results file {str(path)!r} is corrupted ({msg}); move it away and rerun with "
                         "--resume to recompute its cases") from None
    if missing:
        raise InputError(f"results file {str(path)!r} is not a privbench part (no column {missing[0]!r})")
    check_part_values(path, tab)
    stored = (tab.schema.metadata or {}).get(DIGEST_KEY.encode())
    if columns is None and stored is None and SEALED_SINCE in names:  # written sealed: the seal was damaged
        raise InputError(f"results file {str(path)!r} is corrupted (its digest is missing); "
                         "move it away and rerun with --resume to recompute its cases")
    if columns is None and stored is not None and stored.decode(errors="replace") != content_digest(tab):
        raise InputError(f"results file {str(path)!r} is corrupted (its content does not match its digest); "
                         "move it away and rerun with --resume to recompute its cases")
    if columns is None:
        import pyarrow as pa

        for name in COLUMN_NAMES:  # parts written before a column was added: null there
            if name not in tab.column_names:
                tab = tab.append_column(name, pa.nulls(len(tab), schema().field(name).type))
        try:
            tab = tab.select(COLUMN_NAMES).cast(schema())
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"results file {str(path)!r} has unexpected column types ({exc})") from None
    return tab


def _conform(row: dict[str, Any]) -> dict[str, Any]:
    rec = row if isinstance(row, Record) else Record(row)  # an unknown column is a KeyError here
    if rec.get("status") not in STATUSES:  # pragma: no cover - a runner bug
        raise ValueError(f"status={rec.get('status')!r} (allowed: {STATUSES})")
    return rec.row()


def _fsynced_temp(directory: Path, text: str) -> str:
    """A complete temporary file holding ``text`` in ``directory``, flushed to disk; its path."""
    fd, tmp = tempfile.mkstemp(prefix=f".tmp-{os.getpid()}-", dir=directory)
    try:
        make_default_mode(fd)  # 0644 under umask 022, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (fsynced temporary file, then rename), creating its folder."""
    path = Path(path)
    if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):
        raise InputError(f"{str(path)!r} exists and is not a regular file: not replaced")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _fsynced_temp(path.parent, text)
    try:
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover
        return True
    return True


def case_ids_present(statuses: dict[str, str], ids: Iterable[str], retry_failed: bool) -> list[bool]:
    """Per id: is it finished (any status, or only ``ok`` when ``retry_failed``)?"""
    return [(statuses.get(i) == "ok") if retry_failed else (i in statuses) for i in ids]
