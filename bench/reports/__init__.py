"""Reports from stored records (see each module): the generic report (generic.py: tables.py,
figures.py), the paper report (paper.py, paper_tables.py, sections/), A/B comparison (compare.py),
all rendered by one renderer (render.py: Markdown with PNGs beside it, or self-contained HTML).

Rows with ``bound_kind == "none"`` (scenarios with no known optimum) have NaN gaps: the gap table
leaves them out, their plots have no optimum curve, and "Learned points without a known optimum"
lists their leakage, distortion and utility accuracies.
"""

from .compare import compare
from .figures import optimum_curve, tradeoff_figures
from .generic import write_html, write_markdown
from .paper import reference_values, suite_metadata, write_paper_report
from .sections.sample_complexity import sample_complexity_frame
from .tables import aggregate_points, flags_table, gap_table, no_optimum_table, timing_table

__all__ = ["aggregate_points", "compare", "flags_table", "gap_table", "no_optimum_table", "optimum_curve",
           "reference_values", "sample_complexity_frame", "suite_metadata", "timing_table", "tradeoff_figures",
           "write_html", "write_markdown", "write_paper_report"]
