"""A release server: ``python -m privbench.learners.serve``.

The bench's evaluator process never calls a mechanism's ``release()`` itself:
it asks this server, a process that imports privbench's learners (and the
modules registering third-party mechanism types) but nothing of the bench, to
load the saved file and release.  A release therefore runs in a process that
looks like any user's deployment: no evaluator in its stack or its modules,
no state left by training.

Protocol (stdin, a private copy of stdout; file descriptor 1 itself points at
stderr so that nothing printed by a mechanism reaches a reply).  Requests are
pickles from the bench (trusted direction):

- ``(parent_pid, threads)`` first;
- ``("load", key, path, modules)``: import ``modules`` (name, file), load ``path``;
- ``("describe", key)``: the loaded mechanism's account of itself as plain data (:func:`describe`),
  for an evaluator that never imports a third-party mechanism's module;
- ``("release", key, w, rng_state)``: release for ``w`` with a generator in
  ``rng_state`` (numpy ``bit_generator.state``);
- ``("drop", key)``; ``None`` to exit.

Replies are never pickles: one JSON line (``{"ok": true, "state": ...}`` or
``{"ok": false, "error": ..., "type": ...}``), then, for a release, the array's
raw bytes (dtype, shape and size in the JSON line; object arrays are refused).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import pickle
import sys
import threading
import time
from typing import Any, BinaryIO, Iterator

import numpy as np


def generator(state: dict[str, Any]) -> np.random.Generator:
    """A numpy Generator in exactly ``state``."""
    bit = getattr(np.random, state["bit_generator"])()
    bit.state = state
    return np.random.Generator(bit)


def import_modules(modules: list[tuple[str, str | None]]) -> None:
    """Import each (name, file): by name, else from the file; failures are left to load_mechanism."""
    for name, file in modules:
        if not name or name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001
            if not file:
                continue
            try:
                spec = importlib.util.spec_from_file_location(name, file)
                module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
                sys.modules[name] = module
                spec.loader.exec_module(module)  # type: ignore[union-attr]
            except Exception:  # noqa: BLE001
                sys.modules.pop(name, None)


def handle(msg: tuple, mechs: dict[str, Any], out: BinaryIO) -> None:
    """Carry out one request and write its reply."""
    from privbench.datasets.errors import InputError

    from .registry import load_mechanism

    try:
        if msg[0] == "load":
            import_modules(msg[3])
            mechs[msg[1]] = load_mechanism(msg[2], plugins=False)
            reply(out, {"ok": True})
        elif msg[0] == "describe":
            header, channel = describe(mechs[msg[1]])
            reply(out, {"ok": True, **header}, channel)
        elif msg[0] == "release":
            rng = generator(msg[3])
            z = np.asarray(mechs[msg[1]].release(msg[2], rng))
            reply(out, {"ok": True, "state": rng.bit_generator.state}, z)
        elif msg[0] == "drop":
            mechs.pop(msg[1], None)
            reply(out, {"ok": True})
    except Exception as exc:  # noqa: BLE001 - the evaluator raises it again
        text = " ".join(str(exc).split()) or "(no message)"
        kind = "InputError" if isinstance(exc, InputError) else type(exc).__name__
        reply(out, {"ok": False, "type": kind, "error": text[:2000]})


def plain(x: Any) -> Any:
    """``json.dumps`` fallback: numpy scalars as numbers, arrays as ``{"ndarray": list, "dtype": str}``
    (:func:`privbench.bench.remote_release.unplain` turns them back), anything else its ``str``."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray) and not x.dtype.hasobject:
        return {"ndarray": x.tolist(), "dtype": x.dtype.str}
    return str(x)


def listed(x: Any) -> Any:
    """``json.dumps`` fallback of ``info`` (as the bench stores it): numpy scalars and arrays as numbers and
    lists, anything else its ``str``."""
    if isinstance(x, (np.generic, np.ndarray)) and not x.dtype.hasobject:
        return x.tolist()
    return str(x)


def describe(mech: Any) -> tuple[dict[str, Any], np.ndarray | None]:
    """What an evaluator reads of a mechanism besides its releases, as plain data: its task (dict), budget,
    ``info``, ``params()`` (JSON, arrays tagged by :func:`plain`) and ``channel()`` (the array sent after the
    reply's line, or None).  A method that raises is described by its error text instead."""
    header: dict[str, Any] = {"task": mech.task.to_dict(), "budget": float(mech.budget),
                              "info": json.loads(json.dumps(getattr(mech, "info", None) or {}, default=listed))}
    channel = None
    for name in ("params", "channel"):
        try:
            value = getattr(mech, name)()
            if name == "params":
                header["params"] = None if value is None else json.loads(json.dumps(dict(value), default=plain))
            elif value is not None:
                channel = np.asarray(value)
                if channel.dtype.hasobject:
                    channel = None
                    raise TypeError("channel() returned an object array")
        except Exception as exc:  # noqa: BLE001 - the evaluator raises it where it asks
            header[f"{name}_error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:500]}"
    return header, channel


def reply(out: BinaryIO, header: dict[str, Any], array: np.ndarray | None = None) -> None:
    """One reply: a JSON line, then the array (``.npy``) when there is one."""
    header["array"] = array is not None
    if array is not None and array.dtype.hasobject:
        header = {"ok": False, "type": "InputError", "error": "release() returned an object array",
                  "array": False}
        array = None
    if array is not None:
        array = np.ascontiguousarray(array)
        header.update(dtype=array.dtype.str, shape=list(array.shape), nbytes=int(array.nbytes))
    out.write(json.dumps(header, default=int).encode() + b"\n")
    if array is not None:
        out.write(array.tobytes())
    out.flush()


def private_stdout() -> BinaryIO:
    """A private copy of stdout for replies; file descriptor 1 itself then points at stderr, so that
    nothing printed (by Python or C code) can corrupt a reply."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return out


def requests(stream: BinaryIO) -> Iterator[Any]:
    """The pickled requests on ``stream``, until ``None`` or the end of input."""
    while True:
        try:
            msg = pickle.load(stream)
        except EOFError:
            return
        if msg is None:
            return
        yield msg


def watch_parent(parent: int) -> None:
    """Exit when the parent (the evaluator process) is gone."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(3)


def quick_exit(code: int = 0) -> None:
    """Leave the process now, once the standard streams are flushed: a process whose replies are all
    sent has nothing left to do, and a normal interpreter shutdown (tearing down torch's modules) takes
    about a second of CPU, paid by every run at its end.  Exit handlers do not run: call it only after
    closing what they would close."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def serve_requests(inbox: BinaryIO, out: BinaryIO, parent: int, threads: int, watch: Any = None) -> None:
    """The server's loop once torch is imported: exit with ``parent`` (``watch``, default
    :func:`watch_parent`), ``threads`` torch threads, the ready line, then every request on ``inbox``;
    leaves the process (:func:`quick_exit`) at the end of its input."""
    import torch

    threading.Thread(target=watch or watch_parent, args=(parent,), daemon=True).start()
    torch.set_num_threads(threads)
    from . import registry  # noqa: F401 - the learners' modules are imported on need (registry.load_mechanism)

    reply(out, {"ok": True, "ready": True})
    mechs: dict[str, Any] = {}
    for msg in requests(inbox):
        handle(msg, mechs, out)
    out.flush()
    quick_exit(0)


def main() -> None:  # pragma: no cover - exercised through the bench's RemoteReleases
    import signal

    import torch  # noqa: F401 - imported before the first request is read, as serve_requests needs it

    out = private_stdout()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent, threads = pickle.load(sys.stdin.buffer)
    serve_requests(sys.stdin.buffer, out, parent, threads)


if __name__ == "__main__":  # pragma: no cover
    main()
