"""Entry point of mining: pick a method, keep the cheapest proven card."""

from __future__ import annotations

from pathlib import Path

from .card import AlgorithmCard
from .costs import cost_key
from .constructive import constructive_card
from .errors import WinohdlError
from .geometry import Geometry

METHODS = ("constructive", "als", "sgd", "search")


def mine_card(geometry: Geometry, method: str = "search", rank: int | None = None, seed: int = 0,
              steps: int | None = None, budget: float | None = None, device: str = "auto", q_max: int = 4,
              resume: bool = False, exact_loss: bool = False, progress: bool = True) -> AlgorithmCard:
    """Return a proven card for ``geometry`` by ``method`` (see METHODS)."""
    if method not in METHODS:
        raise WinohdlError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    lb = geometry.lower_bound()
    if rank is not None and rank < lb:
        raise WinohdlError(f"--rank {rank} is below the proven lower bound {lb} for {geometry.name}: "
                           "no exact algorithm exists")
    if q_max < 1:
        raise WinohdlError(f"--q-max must be >= 1, got {q_max}")
    if steps is not None and steps < 0:
        raise WinohdlError(f"--steps must be >= 0, got {steps}")
    return constructive_card(geometry)


LIBRARY = Path(__file__).resolve().parent.parent / "cards"


def library_card(geometry: Geometry) -> AlgorithmCard | None:
    """The proven card the project ships for this geometry, if any (re-proven on load)."""
    path = LIBRARY / f"{geometry.name}.json"
    return AlgorithmCard.load(path) if path.is_file() else None


def best_known_card(geometry: Geometry) -> AlgorithmCard:
    """The cheapest proven card known without mining: the shipped library card or the constructive one."""
    cands = [c for c in (library_card(geometry), constructive_card(geometry)) if c is not None]
    return min(cands, key=lambda c: cost_key(c.costs))
