"""The ``privbench`` command line.

Bad input (unknown scenario, parameter, family; invalid value; a
(privacy, observation) pair without a known optimum) prints one line on stderr
and exits with status 2, never a traceback.

One module per command group: :mod:`.optimum` (``optimum``, ``list``),
:mod:`.run` (``run``), :mod:`.report` (``report``, ``compare``), :mod:`.check`
(``check``); :mod:`.common` holds the parser class, argument types and exit
codes; :mod:`.main` assembles the parser.  The console script is
``privbench = privbench.bench.cli:main``.
"""

from privbench.bench.cli.common import EXIT_BAD_INPUT, EXIT_CHECK_FAILED
from privbench.bench.cli.main import build_parser, main

__all__ = ["main", "build_parser", "EXIT_BAD_INPUT", "EXIT_CHECK_FAILED"]
