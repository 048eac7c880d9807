"""Progress display for long work: a tqdm bar or status line on stderr when it is a terminal.

The command line decides once (:func:`configure`): on when stderr is a terminal and
``--quiet`` is not given; ``WINOHDL_PROGRESS=1`` forces it on (e.g. under a pseudo
terminal in tests), ``WINOHDL_PROGRESS=0`` off. Library use is quiet by default.
"""

from __future__ import annotations

import os
import sys

from tqdm import tqdm

_enabled = False


def configure(quiet: bool) -> None:
    """Turn progress on or off for this process (called by the command line)."""
    global _enabled
    forced = os.environ.get("WINOHDL_PROGRESS")
    if forced in ("0", "1"):
        _enabled = forced == "1"
    else:
        _enabled = not quiet and sys.stderr.isatty()


def enabled() -> bool:
    return _enabled


def bar(total: int | None, desc: str, unit: str = "it") -> tqdm:
    """A progress bar (disabled, and silent, when progress is off); use as a context manager."""
    return tqdm(total=total, desc=desc, unit=unit, leave=False, file=sys.stderr, disable=not _enabled,
                dynamic_ncols=True)


def status(text: str) -> None:
    """A one-line status message on stderr (only when progress is on)."""
    if _enabled:
        tqdm.write(text, file=sys.stderr)
