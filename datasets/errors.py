"""The one exception type for bad input anywhere in privbench.

Every layer raises :class:`InputError` with a one-line message that names the
bad value and what is allowed; the CLI prints that line and exits with 2.
The validators that raise it live in
:mod:`privbench.datasets.validate`. It subclasses :class:`ValueError` so library users can catch it either way.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: the message is one line naming the value and what is allowed."""


def qualified(obj: object) -> str:
    """``module:QualName`` of a class (or of an instance's class)."""
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}:{cls.__qualname__}"


def check_name_free(what: str, name: str, taken: object | None, new: object) -> None:
    """InputError (one line, naming both) unless ``name`` is free in a registry of ``what`` or held by ``new``.

    ``taken`` is what the registry holds under ``name`` (None: nothing); a class registered again under the
    same ``module:QualName`` (a module imported twice) is the same one.  Every registry keyed by name
    (learners, mechanism types, scenarios, optimum providers) refuses a clash this way, so that a plug-in
    can never take over a built-in name: the built-in stays, the plug-in is refused.
    """
    if taken is None or taken is new or qualified(taken) == qualified(new):
        return
    raise InputError(f"a {what} named {name!r} is already registered ({qualified(taken)}); "
                     f"{qualified(new)} cannot replace it (choose another name)")
