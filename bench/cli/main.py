"""The ``privbench`` parser and :func:`main`, the console script's entry point."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from privbench.bench.cli.check import add_check
from privbench.bench.cli.completion import add_completion
from privbench.bench.cli.common import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_IO_ERROR, OneLineParser
from privbench.bench.cli.optimum import add_list, add_optimum
from privbench.bench.cli.report import add_compare, add_report
from privbench.bench.cli.run import add_run
from privbench.datasets.errors import InputError

DESCRIPTION = ("Measure how close learned privacy mechanisms come to the exact optimal privacy-utility "
               "tradeoff.")


def build_parser() -> argparse.ArgumentParser:
    """The ``privbench`` parser with its commands: optimum, list, run, report, compare, check, completion."""
    parser = OneLineParser(prog="privbench", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}",
                        help="print the installed privbench version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser,
                               help="the command to run ('privbench COMMAND --help' for its options)")
    sub.required = True
    add_optimum(sub)
    add_list(sub)
    add_run(sub)
    add_report(sub)
    add_compare(sub)
    add_check(sub)
    add_completion(sub, build_parser)
    return parser


#: stdout was closed by its reader: 128 + SIGPIPE, as a shell reports a process killed by it.
EXIT_BROKEN_PIPE = 141


def package_version() -> str:
    """The installed distribution's version (importlib.metadata), or "unknown" outside an installation."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("privbench")
    except PackageNotFoundError:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (also used by the console script).

    Bad input prints one line on stderr and returns 2 (:data:`EXIT_BAD_INPUT`), never a traceback;
    a file that cannot be written or read (a full disk) one line and 74 (:data:`EXIT_IO_ERROR`).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # as typed: for the next command a run suggests
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        sys.stderr.write(f"privbench: error: {exc}\n")
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # the reader went away ('privbench list learners | head'): not an I/O failure
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so that flushing at exit is silent
        return EXIT_BROKEN_PIPE
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        sys.stderr.write(f"privbench: error: I/O failure: {exc.strerror or exc}{where}; results already stored "
                         "are intact (continue with --resume)\n")
        return EXIT_IO_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("privbench: interrupted\n")
        return EXIT_INTERRUPTED
