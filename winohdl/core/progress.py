"""Progress display for long work: a tqdm bar or status line on stderr when it is a terminal.

The command line decides once (:func:`configure`): on when stderr is a terminal and
``--quiet`` is not given; ``WINOHDL_PROGRESS=1`` forces it on (e.g. under a pseudo
terminal in tests), ``WINOHDL_PROGRESS=0`` off. Library use is quiet by default; a program
(a notebook, a GUI) hears the same progress through one callback (:func:`listen`).
"""

from __future__ import annotations

import os
import sys

from typing import Callable

from tqdm import tqdm

_enabled = False
_listener: Callable[[str, int, int | None], None] | None = None


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


def listen(callback: Callable[[str, int, int | None], None] | None) -> None:
    """Hear every step of the work: ``callback(what, done, total)`` for each bar's step (``total`` None
    where it is not known) and ``callback(text, 0, None)`` for each status line; None stops it. It is
    called whether or not the display is on, in the thread doing the work."""
    global _listener
    _listener = callback


class _Bar(tqdm):
    """tqdm that also tells the listener each step (its own count: a disabled tqdm keeps none)."""

    def __init__(self, *args, **kwargs):
        self._what, self._steps, self._done = kwargs.get("desc", ""), kwargs.get("total"), 0
        super().__init__(*args, **kwargs)

    def update(self, n=1):
        self._done += n
        if _listener is not None:
            _listener(self._what, self._done, self._steps)
        return super().update(n)


def bar(total: int | None, desc: str, unit: str = "it") -> tqdm:
    """A progress bar (disabled, and silent, when progress is off); use as a context manager."""
    return _Bar(total=total, desc=desc, unit=unit, leave=False, file=sys.stderr, disable=not _enabled,
                dynamic_ncols=True)


def status(text: str) -> None:
    """A one-line status message on stderr (only when progress is on), and to the listener."""
    if _listener is not None:
        _listener(text, 0, None)
    if _enabled:
        tqdm.write(text, file=sys.stderr)
