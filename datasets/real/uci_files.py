"""The bundled UCI files (Adult, Abalone): where they are, their checksums, cached loaders.

The files ship gzip-compressed in ``data/`` beside this module; ``data/README.md``
says where the bytes came from (PyPI packages that carry the UCI originals) and
under which licence (CC BY 4.0).  Nothing is downloaded.  Every load checks the
decompressed file's sha256 against :data:`UCI_SHA256` (the UCI originals').
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from ..errors import InputError
from .abalone import AbaloneData, read_abalone
from .adult import AdultData, read_adult
from .idx import read_bytes

DATA_DIR = Path(os.path.dirname(os.path.abspath(__file__))) / "data"
#: sha256 of each UCI file as published (decompressed).
UCI_SHA256 = {
    "adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    "abalone.data": "de37cdcdcaaa50c309d514f248f7c2302a5f1f88c168905eba23fe2fbc78449f",
}


def uci_path(name: str, check: bool = True) -> Path:
    """Path of the bundled ``name`` (``adult.data``, ``adult.test`` or ``abalone.data``), gzipped.

    Raises
    ------
    InputError
        An unknown name, a missing file, or (``check``) content whose sha256 is not the UCI file's.
    """
    if name not in UCI_SHA256:
        raise InputError(f"UCI file {name!r} is not bundled (allowed: {', '.join(UCI_SHA256)})")
    path = DATA_DIR / f"{name}.gz"
    if not path.is_file():
        raise InputError(f"the bundled UCI file {str(path)!r} is missing (a broken install: reinstall privbench)")
    if check:
        digest = hashlib.sha256(read_bytes(path, "UCI")).hexdigest()
        if digest != UCI_SHA256[name]:
            raise InputError(f"the bundled UCI file {str(path)!r} has sha256 {digest}, not the UCI "
                             f"original's {UCI_SHA256[name]}")
    return path


@functools.lru_cache(maxsize=2)
def load_adult(part: str) -> AdultData:
    """The bundled UCI-Adult ``part`` (``train``: adult.data, 30,162 rows; ``test``: adult.test, 15,060 rows),
    rows with a missing value dropped (45,222 in all, as the generative-filter paper), cached per process."""
    files = {"train": "adult.data", "test": "adult.test"}
    if part not in files:
        raise InputError(f"part={part!r} is unknown (allowed: {', '.join(files)})")
    return read_adult(uci_path(files[part]), missing="drop")


@functools.lru_cache(maxsize=1)
def load_abalone() -> AbaloneData:
    """The bundled UCI-Abalone table (4,177 rows), cached per process."""
    return read_abalone(uci_path("abalone.data"))
