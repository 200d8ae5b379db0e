"""Errors of the learners (no imports: every learners module, torch or not, can raise them)."""


class TrainingError(RuntimeError):
    """Training diverged (NaN/inf loss or parameters); the message names the step."""
