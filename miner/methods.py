"""How a card is found, and where the SGD trains: light (no other import), so the command line can
list the values at start-up."""

from __future__ import annotations

import enum


class Method(enum.Enum):
    """How a card is found (the default first)."""

    SEARCH = "search"
    CONSTRUCTIVE = "constructive"
    ALS = "als"
    SGD = "sgd"


DEVICES = ("auto", "cpu", "cuda")
"""Where the SGD trains: ``auto`` (CUDA when available), ``cpu`` or ``cuda``."""

DEFAULT_SECONDS = {Method.SEARCH: 10.0, Method.ALS: 60.0, Method.SGD: 600.0}
"""A method's time budget without ``--seconds`` (the constructive card takes milliseconds, none). SGD's
proves every suite geometry well within it on two CPU cores (docs/mining.md)."""
