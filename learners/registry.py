"""The learner registry: built-in learners, third-party plug-ins, lookup by name.

A third-party learner registers without editing privbench, either by calling
:func:`register` (e.g. at import of its module)::

    from privbench.learners import Learner, register
    class MyLearner(Learner): ...
    register(MyLearner)

or through the entry-point group ``privbench.learners`` in its own package
metadata (``name = my_pkg.module:MyLearner``), loaded on first lookup.  Any
``module:Class`` spec also resolves directly (:func:`resolve_learner`).

The built-in learners and mechanism types register when their modules are
imported; every module of the package is imported (:func:`load_builtins`) on
first lookup of a learner and before :func:`load_mechanism` looks up a saved
mechanism's type, so a fresh process can load a mechanism file without
importing any learner first, and a new learner is one new file.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import warnings
from importlib.metadata import entry_points
from typing import Any

from pathlib import Path

from privbench.datasets.errors import InputError, check_name_free
from privbench.datasets.tasks import Task
from privbench.datasets.validate import check_budget

from .base import FORMAT, MECHANISM_TYPES, Learner, Mechanism
from .serves import Serves, as_serves

_REGISTRY: dict[str, type[Learner]] = {}
_PLUGIN_ERRORS: dict[str, str] = {}
_LOADED = False
ENTRY_POINT_GROUP = "privbench.learners"
#: A ``--learner module:Class`` spec: dotted Python names on both sides.
SPEC = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def register(cls: type[Learner], name: str | None = None, replace: bool = False) -> type[Learner]:
    """Register a Learner subclass (usable as a class decorator); returns ``cls``."""
    if not (isinstance(cls, type) and issubclass(cls, Learner)):
        raise InputError(f"{cls!r} is not a privbench Learner subclass")
    key = name or cls.name
    if not key:
        raise InputError(f"{cls.__name__} has no name: set the class attribute `name`")
    taken = _REGISTRY.get(key)
    if not replace or (taken is not None and is_builtin(taken)):  # a built-in name is never replaced
        check_name_free("learner", key, taken, cls)
    _REGISTRY[key] = cls
    return cls


def is_builtin(cls: type) -> bool:
    """Whether ``cls`` is privbench's own (defined in a ``privbench.`` module), not a plug-in's."""
    return str(getattr(cls, "__module__", "")).startswith("privbench.")


def builtin_modules() -> list[str]:
    """Every module of ``privbench.learners``, sorted: a built-in learner or mechanism type is one new file."""
    package = importlib.import_module(__package__)  # type: ignore[arg-type]
    return sorted(m.name for m in pkgutil.walk_packages(package.__path__, prefix=f"{__package__}."))


def load_builtins() -> None:
    """Import every module of the package (registers the built-in learners and mechanism types)."""
    for module in builtin_modules():
        importlib.import_module(module)


def _load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    load_builtins()
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
            if isinstance(obj, type) and issubclass(obj, Learner):
                register(obj, name=ep.name)  # a plug-in never replaces a learner of the same name
        except Exception as exc:  # noqa: BLE001 - a broken plug-in must not break privbench
            _PLUGIN_ERRORS[ep.name] = f"{ep.value}: {type(exc).__name__}: {exc}"
            warnings.warn(f"privbench learner plug-in {ep.name!r} failed to load: {exc}", stacklevel=2)


def available() -> dict[str, type[Learner]]:
    """All registered learners by name (built-ins and plug-ins), sorted."""
    _load_all()
    return dict(sorted(_REGISTRY.items()))


def plugin_errors() -> dict[str, str]:
    _load_all()
    return dict(_PLUGIN_ERRORS)


def resolve_learner(spec: str) -> type[Learner]:
    """A learner class from a registered name or a ``module:Class`` spec."""
    if ":" in spec:
        return check_declared(spec, plugin_class(spec))
    table = available()
    if spec not in table:
        raise InputError(f"learner {spec!r} is unknown (allowed: {', '.join(table)}, or module:Class)")
    return table[spec]


def plugin_class(spec: str) -> Any:
    """The object ``module:Attr`` names; InputError (one line) for a bad spec or a module that fails to import."""
    mod_name, _, attr = spec.partition(":")
    if not SPEC.fullmatch(spec):
        raise InputError(f"--learner {spec!r} is not of the form module:Class (dotted Python names)")
    try:
        mod = importlib.import_module(mod_name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - ImportError, SyntaxError, SystemExit, anything it raises
        raise InputError(f"--learner {spec!r}: cannot import module {mod_name!r} "
                         f"({type(exc).__name__}: {one_line(exc)})") from None
    obj: Any = mod
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - a module __getattr__ may raise anything
            raise InputError(f"--learner {spec!r}: module {mod_name!r} has no attribute {attr!r}") from None
    if not (isinstance(obj, type) and issubclass(obj, Learner)):
        raise InputError(f"--learner {spec!r} is not a privbench Learner subclass")
    return obj


def check_declared(spec: str, cls: type[Learner]) -> type[Learner]:
    """``cls`` if its declarations (name, serves, observations, privacies, test_params) have the documented types."""
    for attr in ("observations", "privacies", "protocols"):
        value = getattr(cls, attr, None)
        if not isinstance(value, (tuple, list)) or not all(isinstance(v, str) for v in value):
            raise InputError(f"--learner {spec!r}: {attr}={value!r} must be a tuple of names")
    value = getattr(cls, "serves", None)
    if not isinstance(value, Serves):
        if not isinstance(value, (tuple, list)) or not all(isinstance(v, str) for v in value):
            raise InputError(f"--learner {spec!r}: serves={value!r} must be a privbench Serves(...) "
                             "or a tuple of task kinds")
        try:
            as_serves(value)
        except InputError as exc:
            raise InputError(f"--learner {spec!r}: {exc}") from None
    if not isinstance(getattr(cls, "test_params", None), dict):
        raise InputError(f"--learner {spec!r}: test_params={getattr(cls, 'test_params', None)!r} must be a dict")
    return cls


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type name if it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def make_learner(spec: str, **params: Any) -> Learner:
    """Instantiate a learner by name or ``module:Class`` with hyper-parameters."""
    cls = resolve_learner(spec)
    try:
        return cls(**params)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - a plug-in's constructor may raise anything
        raise InputError(f"learner {spec!r}: bad hyper-parameters ({type(exc).__name__}: {one_line(exc)})") from None


def load_mechanism(path: str | os.PathLike, plugins: bool = True) -> Mechanism:
    """Load a mechanism saved by :meth:`Mechanism.save`, in any process.

    The built-in mechanism types and (``plugins``) those of entry-point plug-ins
    are registered first (:func:`available`); without ``plugins`` only the
    built-ins and modules already imported count (the release server imports the
    defining modules itself, and no plug-in that would bring the bench along); the
    built-ins are imported only when the file's type is not registered yet.
    Only plain tensors, strings and numbers are unpickled
    (``torch.load(weights_only=True)``); anything else raises :class:`InputError`.
    """
    path, blob = read_saved(path)
    kind = blob.get("type")
    if plugins:
        _load_all()
    elif kind not in MECHANISM_TYPES:  # a release server imports the defining modules itself, the rest on need
        load_builtins()
    return build_saved(path, blob)


def saved_type(path: str | os.PathLike) -> str:
    """The mechanism type a saved file declares (InputError for a file that is not a safe mechanism file)."""
    return str(read_saved(path)[1].get("type"))


def load_builtin_mechanism(path: str | os.PathLike) -> Mechanism | None:
    """The saved mechanism if its type is a built-in one (privbench's own class), else None, importing
    nothing but privbench: what the bench's evaluator loads itself (a third-party type is described to it
    by the release server instead, :class:`privbench.bench.remote_release.RemoteMechanism`)."""
    path, blob = read_saved(path)
    if blob.get("type") not in MECHANISM_TYPES:
        load_builtins()
    cls = MECHANISM_TYPES.get(blob.get("type"))  # type: ignore[arg-type]
    return build_saved(path, blob) if cls is not None and is_builtin(cls) else None


def read_saved(path: str | os.PathLike) -> tuple[Path, dict[str, Any]]:
    """``(path, blob)`` of a saved mechanism file, unpickling only plain tensors, strings and numbers."""
    import torch

    path = Path(path)
    if not path.is_file():
        raise InputError(f"mechanism file {str(path)!r} does not exist")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # noqa: BLE001 - any unpickling failure is a refusal
        raise InputError(f"{str(path)!r} is not a safe privbench mechanism file (torch.load with "
                         "weights_only=True refused it: it is corrupt or holds pickled objects)") from None
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise InputError(f"{str(path)!r} is not a privbench mechanism file (format {FORMAT} expected)")
    return path, blob


def build_saved(path: Path, blob: dict[str, Any]) -> Mechanism:
    """The mechanism of a file read by :func:`read_saved`, by its registered type."""
    kind = blob.get("type")
    if kind not in MECHANISM_TYPES:
        raise InputError(f"{str(path)!r} holds mechanism type {kind!r} (known: {', '.join(sorted(MECHANISM_TYPES))})")
    try:
        task = Task.from_dict(json.loads(blob["task"]))
        budget = check_budget(blob["budget"])
        parts = [json.loads(blob[k]) for k in ("info", "config")]
        if not all(isinstance(p, dict) for p in parts):
            raise InputError("info and config must be JSON objects")
        return MECHANISM_TYPES[kind]._from_state(task, budget, parts[0], parts[1], dict(blob["tensors"]))
    except (InputError, ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError) as exc:
        raise InputError(f"{str(path)!r} is a malformed privbench mechanism file "
                         f"({type(exc).__name__}: {one_line(exc)})") from None
