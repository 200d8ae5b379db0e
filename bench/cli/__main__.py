"""``python -m privbench.bench.cli``: the same as the ``privbench`` console script."""

import sys

from privbench.bench.cli.main import main

if __name__ == "__main__":  # pragma: no cover  (importing the module, as pkgutil.walk_packages does, runs nothing)
    sys.exit(main())
