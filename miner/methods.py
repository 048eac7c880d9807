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
