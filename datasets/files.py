"""The mode of the files privbench writes: what ``open(path, "w")`` would give, whatever writes them.

An atomic write goes through ``tempfile.mkstemp``, which creates its file with
mode 0600 regardless of the umask; renamed into place, a results part, a
manifest or a report would then be unreadable to the user's group and others,
unlike every other file they create.  :func:`make_default_mode` gives such a
file the mode a plain ``open`` would have: 0666 with the umask's bits cleared
(0644 under the usual umask 022, 0600 under 077).
"""

from __future__ import annotations

import os


def current_umask() -> int:
    """The process's umask, read without changing it where Linux allows (``/proc/self/status``);
    elsewhere set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def default_file_mode() -> int:
    """0o666 with the umask's bits cleared: the mode ``open(path, "w")`` creates a file with."""
    return 0o666 & ~current_umask()


def make_default_mode(fd: int) -> None:
    """Give the open file ``fd`` (e.g. from ``tempfile.mkstemp``, mode 0600) :func:`default_file_mode`."""
    os.fchmod(fd, default_file_mode())
