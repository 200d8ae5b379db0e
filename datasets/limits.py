"""The documented limits on sizes and magnitudes privbench accepts (README, "Limits").

Values inside the mathematical domain but beyond what a machine can build are
refused up front, naming the limit, instead of failing deep inside numpy, a
solver or the store: every validator of :mod:`privbench.datasets.validate`
that takes a size or a magnitude uses these numbers.
"""

from __future__ import annotations

#: Largest finite alphabet (letters of S, U or Z; e.g. ``symmetric-pair`` m, a joint matrix's sides).
MAX_ALPHABET = 256
#: Largest training or evaluation sample size of one case (``n_train``, ``n_eval``).
MAX_SAMPLES = 10_000_000
#: Most repetitions (seeds) of one case.
MAX_REPS = 10_000
#: Most cases one suite or ad-hoc run may declare.
MAX_CASES = 100_000
#: Largest magnitude of a real model parameter (a mean, a standard deviation, a variance, a
#: covariance or distortion entry): squares and products of such numbers stay finite.
MAX_MAGNITUDE = 1e100
#: Smallest positive scale parameter (a standard deviation or a variance); smaller ones underflow.
MIN_SCALE = 1e-100
#: Deepest nesting of a file privbench reads (suite YAML, baselines JSON, a JSON parameter).
MAX_DEPTH = 50
#: Most local worker processes (``--jobs``).
MAX_JOBS = 1024
#: Most torch threads per worker process (``--threads``).
MAX_THREADS = 1024
#: Largest integer hyper-parameter of a built-in learner (training steps, widths, batch sizes).
MAX_HYPER_INT = 1_000_000
#: Largest data file privbench reads (IDX, CSV), after gzip decompression, in bytes.
MAX_FILE_BYTES = 2**31
