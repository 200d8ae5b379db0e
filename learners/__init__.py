"""privbench.learners."""
