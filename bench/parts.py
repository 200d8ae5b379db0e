"""What a results part must hold beyond its columns: known statuses, case ids, and its seal.

A part is sealed when written (:func:`content_digest` in the parquet schema metadata under
:data:`DIGEST_KEY`); a part whose decoded content no longer matches its seal is corrupted,
even where parquet itself decodes it.  Parts written before the seal existed have none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from privbench.datasets.errors import InputError
from privbench.datasets.vocabulary import STATUSES

DIGEST_KEY = "privbench_sha256"  # schema metadata of a part: content_digest() of its table


def content_digest(table: Any) -> str:
    """SHA-256 of a table's columns and rows (Arrow IPC, schema metadata left out): a part's seal."""
    import hashlib

    import pyarrow as pa

    sink = pa.BufferOutputStream()
    plain = table.replace_schema_metadata(None).combine_chunks()
    with pa.ipc.new_stream(sink, plain.schema) as writer:
        writer.write_table(plain)
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()


def check_part_values(path: Path, tab: Any) -> None:
    """InputError naming ``path`` when a row has no case id or an unknown status."""
    statuses = tab.column("status").to_pylist()
    bad = next((s for s in statuses if s not in STATUSES), "") if statuses else ""
    if bad != "":
        raise InputError(f"results file {str(path)!r} has status={bad!r} (allowed: {', '.join(STATUSES)})")
    if tab.column("case_id").null_count:
        raise InputError(f"results file {str(path)!r} has a row without case_id")
