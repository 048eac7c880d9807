"""Error types and the command line's exit codes.

Exit codes: 0 success, 1 verification failed (a simulation or proof disagreed) or an
internal error, 2 bad input (the user can fix it; one line ``error: ...``),
130 interrupted before anything useful was saved.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class WinohdlError(ValueError):
    """Bad input, explained in one line for the user (exit status 2).

    Every package raises this (or a subclass) for problems the user can fix:
    an impossible geometry, a malformed card, an unsupported width, a missing
    simulator, a size limit exceeded, a tampered design folder.
    """


class CardError(WinohdlError):
    """A card that is malformed or whose identity does not hold."""


class LimitError(WinohdlError):
    """A documented size limit was exceeded (the message names the limit and how to raise it)."""


class Interrupted(Exception):
    """The user pressed Ctrl-C before anything worth keeping was found (exit status 130)."""
