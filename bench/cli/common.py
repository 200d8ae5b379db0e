"""What every ``privbench`` command shares: the one-line error parser, argument types, exit codes."""

from __future__ import annotations

import argparse
import os
import shlex
import stat
import sys
from pathlib import Path
from typing import Any, Sequence

from privbench.datasets.errors import InputError

EXIT_BAD_INPUT = 2
EXIT_CHECK_FAILED = 1
#: ``privbench compare``: B is worse than A beyond noise on some point (``--fail-on worse``).
EXIT_COMPARE_WORSE = 1
#: ``privbench run`` finished, but a case failed, timed out or was stored inconsistent.
EXIT_CASES_FAILED = 1
#: A file or directory could not be read or written (a full disk, a permission): EX_IOERR of sysexits.h.
EXIT_IO_ERROR = 74
EXIT_INTERRUPTED = 130
#: Where learners train (``--device``); ``auto``: cuda for the learners that declare a GPU pays on the
#: task's kind (``Learner.gpu_task_kinds``: the image learners) where one is available, else cpu.
DEVICES = ("auto", "cpu", "cuda")


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exits with 2.

    Abbreviated long options are refused (``allow_abbrev=False``) on this parser and,
    since the sub-parsers are made with this class, on every sub-parser: ``run --seed 3``
    must not silently mean ``run --seeds 3``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

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


def count_type(flag: str, minimum: int, maximum: int):
    """argparse type of an integer option in [``minimum``, ``maximum``] (a documented limit)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{flag}={value} must be an integer >= {minimum}")
        if value > maximum:
            raise argparse.ArgumentTypeError(f"{flag}={value} exceeds the limit {maximum} "
                                             "(privbench.datasets.limits)")
        return value

    parse.__name__ = flag.lstrip("-").replace("-", "_")
    return parse


def check_output_file(flag: str, path: str | None) -> None:
    """An output file option: a new path in an existing directory, or an existing regular file.

    Anything else (an empty name, a directory, a device, a FIFO, a socket, a symbolic
    link) is refused, so that the atomic rename never replaces what is at ``path``.
    """
    if path is None:
        return
    if not path.strip():
        raise InputError(f"{flag} {path!r} is empty (give a file name)")
    p = Path(path)
    if os.path.lexists(p):
        mode = os.lstat(p).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a symbolic link" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode)
                    else "not a regular file")
            raise InputError(f"{flag} {path!r} is {kind}; give a regular file or a new path")
    elif not p.parent.is_dir():
        raise InputError(f"{flag} {path!r}: directory {str(p.parent)!r} does not exist")


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
