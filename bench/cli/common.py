"""What every ``privbench`` command shares: the one-line error parser, argument types, exit codes."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Sequence

from privbench.datasets.errors import InputError

EXIT_BAD_INPUT = 2
EXIT_CHECK_FAILED = 1
EXIT_INTERRUPTED = 130
#: Where learners train (``--device``); ``auto``: cuda if available.
DEVICES = ("auto", "cpu", "cuda")


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exits with 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(EXIT_BAD_INPUT)


def param(text: str) -> tuple[str, str]:
    """argparse type of ``--param NAME=VALUE``: (name, value), both stripped."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--param {text!r} must look like NAME=VALUE")
    return name.strip(), value.strip()


def budget(text: str) -> float:
    """argparse type of ``--budget B``: a float."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--budget {text!r} is not a number") from None


def unique_params(flag: str, pairs: list[tuple[str, str]]) -> dict[str, str]:
    """``pairs`` as a dict; InputError naming the first name ``flag`` gives more than once."""
    names = [n for n, _ in pairs]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise InputError(f"{flag} {dup} is given more than once")
    return dict(pairs)


def command_line(argv: Sequence[str]) -> str:
    """The shell-quoted command line recorded in a run's manifest."""
    return " ".join(shlex.quote(a) for a in argv)
