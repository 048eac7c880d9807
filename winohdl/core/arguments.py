"""The command line's argument types: each takes the text of one option and returns its value, or
rejects it with a one-line reason (``argparse.ArgumentTypeError``), which the parser prints as
``error: ...`` and exit 2."""

from __future__ import annotations

import argparse
import math
import re

from winohdl.core.errors import WinohdlError


def _int(text: str, minimum: int, what: str) -> int:
    if len(text) > 24 or not re.fullmatch(r"\s*[+-]?[0-9]+\s*", text):  # ASCII digits: not "1_0" or "\u0663"
        raise argparse.ArgumentTypeError(f"expected {what}, got {text[:40]!r}")
    v = int(text)
    if v < minimum:
        raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {v}")
    return v


def nonnegative_int(text: str) -> int:
    return _int(text, 0, "a whole number >= 0")


def positive_int(text: str) -> int:
    return _int(text, 1, "a whole number >= 1")


def width(text: str) -> int:
    return _int(text, 1, "a width in bits")


def path(text: str) -> str:
    """A file or folder name: not empty (an empty name would silently mean the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a file or folder name, got an empty one")
    return text


def _float(text: str, positive: bool) -> float:
    from winohdl.core.limits import SECONDS
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text[:40]!r}") from None
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        raise argparse.ArgumentTypeError(f"must be a finite number {'> 0' if positive else '>= 0'}, "
                                         f"got {text[:40]!r}")
    try:
        limit = SECONDS.value
    except WinohdlError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if v > limit:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is above the limit of {limit} seconds "
                                         f"(raise it with {SECONDS.env}=N)")
    return v


def positive_seconds(text: str) -> float:
    return _float(text, True)


def nonnegative_seconds(text: str) -> float:
    return _float(text, False)
