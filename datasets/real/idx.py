"""IDX files (the MNIST format): read, write, and load an image/label pair as :class:`ImageData`."""

from __future__ import annotations

import gzip
import io
import math
import os
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..limits import MAX_FILE_BYTES
from .images import ImageData, image_data


_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_prefix(path: str | os.PathLike, what: str, n: int) -> bytes:
    """At most ``n`` bytes of the file's content (gunzipped when it starts with the gzip magic).

    Decompresses only what it returns: a gzip bomb costs no more than ``n`` bytes.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{what} file {str(p)!r} does not exist")
    try:
        with open(p, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        with (gzip.open(p, "rb") if gz else open(p, "rb")) as fh:
            return fh.read(n)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{what} file {str(p)!r} is a corrupt gzip file or unreadable ({exc})") from None


def read_bytes(path: str | os.PathLike, what: str) -> bytes:
    """The whole content, refused beyond :data:`~privbench.datasets.limits.MAX_FILE_BYTES`."""
    raw = read_prefix(path, what, MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise InputError(f"{what} file {str(path)!r} holds more than {MAX_FILE_BYTES} bytes (the limit, "
                         "privbench.datasets.limits.MAX_FILE_BYTES)")
    return raw


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX file (MNIST's format; gzip detected by its magic bytes).

    The header is two zero bytes, a type code (0x08 uint8, 0x09 int8, 0x0B int16,
    0x0C int32, 0x0D float32, 0x0E float64), the number of dimensions, then one
    big-endian uint32 size per dimension; the data follow big-endian, C order.

    Returns
    -------
    ndarray with the header's shape, in native byte order.

    Raises
    ------
    InputError
        Missing file, corrupt gzip, bad magic, unknown type code, or a data
        length that does not match the header (truncated or trailing bytes).
    """
    raw = read_prefix(path, "IDX", 4 + 4 * 255)
    name = str(path)
    if len(raw) < 4:
        raise InputError(f"IDX file {name!r} is {len(raw)} bytes long, shorter than the 4-byte magic")
    if raw[0] != 0 or raw[1] != 0:
        raise InputError(f"IDX file {name!r} has magic {raw[:4].hex()} (must start with 0000)")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_TYPES:
        raise InputError(f"IDX file {name!r} has type code 0x{code:02x} (allowed: "
                         + ", ".join(f"0x{c:02x}" for c in _IDX_TYPES) + ")")
    if ndim < 1:
        raise InputError(f"IDX file {name!r} declares 0 dimensions (at least 1 needed)")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise InputError(f"IDX file {name!r} is truncated inside its header ({len(raw)} of {header} bytes)")
    shape = tuple(int(d) for d in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_TYPES[code])
    expected = header + math.prod(shape) * dtype.itemsize
    if expected > MAX_FILE_BYTES:
        raise InputError(f"IDX file {name!r} declares shape {shape} of {dtype.name}: {expected} bytes, beyond "
                         f"the limit {MAX_FILE_BYTES} (privbench.datasets.limits.MAX_FILE_BYTES)")
    raw = read_prefix(path, "IDX", expected + 1)
    if len(raw) != expected:
        raise InputError(f"IDX file {name!r} has {len(raw)} bytes but its header {shape} of "
                         f"{dtype.name} needs {expected} (truncated or trailing data)")
    data = np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape)
    return data.astype(dtype.newbyteorder("="))


def load_idx_images(images_path: str | os.PathLike, labels_path: str | os.PathLike,
                    labeling: str = "digit") -> ImageData:
    """MNIST-format image and label files (e.g. ``train-images-idx3-ubyte.gz``) as ImageData.

    The images must be a 3-d uint8 IDX array (n, h, w), scaled by 1/255; the
    labels a 1-d integer IDX array of n digits 0..9.
    """
    x = read_idx(images_path)
    y = read_idx(labels_path)
    if x.ndim != 3 or x.dtype != np.uint8:
        raise InputError(f"IDX images {str(images_path)!r} hold {x.dtype} of shape {x.shape} "
                         "(need uint8 of shape (n, h, w))")
    if y.ndim != 1 or y.dtype.kind not in "iu":
        raise InputError(f"IDX labels {str(labels_path)!r} hold {y.dtype} of shape {y.shape} "
                         "(need 1-d integers)")
    if len(y) != len(x):
        raise InputError(f"IDX files disagree: {len(x)} images but {len(y)} labels")
    return image_data(x, y, labeling, scale=255.0)


def write_idx(path: str | os.PathLike, array: Any, compress: bool | None = None) -> Path:
    """Write ``array`` as an IDX file (gzipped if ``compress`` or the name ends in .gz)."""
    a = np.asarray(array)
    codes = {np.dtype(v).newbyteorder("="): k for k, v in _IDX_TYPES.items()}
    code = codes.get(a.dtype.newbyteorder("="))
    if code is None:
        raise InputError(f"dtype {a.dtype} cannot be written as IDX (allowed: uint8, int8, int16, "
                         "int32, float32, float64)")
    buf = io.BytesIO()
    buf.write(bytes([0, 0, code, a.ndim]))
    buf.write(np.asarray(a.shape, dtype=">u4").tobytes())
    buf.write(a.astype(np.dtype(_IDX_TYPES[code])).tobytes())
    data = buf.getvalue()
    path = Path(path)
    if compress or (compress is None and path.suffix == ".gz"):
        data = gzip.compress(data, mtime=0)
    path.write_bytes(data)
    return path
