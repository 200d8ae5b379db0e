"""Test-wide settings.

Hypothesis: under CI (the environment variable CI is set, as `.ci/run` on a CI
runner does) the property tests are derandomized, so a CI run is reproducible:
the same commit draws the same examples.  Locally they stay random, which is how
the property tests keep finding new cases (each such find is pinned with
``@example``).
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
