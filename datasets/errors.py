"""The one exception type for bad input anywhere in privbench.

Every layer raises :class:`InputError` with a one-line message that names the
bad value and what is allowed; the CLI prints that line and exits with 2.
The validators that raise it live in
:mod:`privbench.datasets.validate`. It subclasses :class:`ValueError` so library users can catch it either way.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: the message is one line naming the value and what is allowed."""
