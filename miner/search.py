"""Entry point of mining: pick a method, keep the cheapest proven card.

Methods: ``constructive`` (the certified optimum, milliseconds), ``als`` (random
multi-start ALS on the exact tensor + rationalisation), ``sgd`` (the article's
method), ``search`` (ALS attempts for a time budget and the constructive card,
each polished; the cheapest proven card by :func:`miner.costs.cost_key` wins).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .als import fit, random_factors
from .card import AlgorithmCard
from .constructive import constructive_card
from .costs import cost_key
from .errors import WinohdlError
from .geometry import Geometry
from .rationalise import rationalise
from .terms import polish

METHODS = ("constructive", "als", "sgd", "search")
LIBRARY = Path(__file__).resolve().parent.parent / "cards"


class NoCardFound(WinohdlError):
    """A mining method used its budget without a proven card."""


def mine_als(geometry: Geometry, rank: int, seed: int, budget: float, q_max: int) -> AlgorithmCard | None:
    """Random restarts of annealed ALS until one snaps to a proven rational card (or the budget ends)."""
    T = geometry.tensor().astype(float)
    rng = np.random.default_rng(seed)
    t0, starts = time.perf_counter(), 0
    deadline = t0 + budget
    while time.perf_counter() < deadline:
        starts += 1
        f = random_factors(T.shape, rank, rng)
        if fit(T, f, sweeps=1500) > 1e-6:
            continue
        prov = {"method": "als", "seed": seed, "steps": starts, "seconds": 0.0, "device": "cpu",
                "config": {"rank": rank, "q_max": q_max, "sweeps": 1500, "restarts": starts}}
        card = rationalise(geometry, f, q_max, prov, should_stop=lambda: time.perf_counter() > deadline)
        if card is not None:
            card.provenance["seconds"] = round(time.perf_counter() - t0, 2)
            return card
    return None


def mine_card(geometry: Geometry, method: str = "search", rank: int | None = None, seed: int = 0,
              steps: int | None = None, budget: float | None = None, device: str = "auto", q_max: int = 4,
              resume: bool = False, exact_loss: bool = False, progress: bool = True,
              checkpoint: Path | None = None, polish_seconds: float = 10.0,
              sgd_settings: dict | None = None) -> AlgorithmCard:
    """Return a proven card for ``geometry`` by ``method`` (see METHODS); raises NoCardFound.

    A mined card at R = lower bound is then polished for up to ``polish_seconds``
    (:func:`miner.terms.polish`: term exchanges while the documented cost drops).
    """
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
    if budget is not None and budget <= 0:
        raise WinohdlError(f"--seconds must be > 0, got {budget}")
    if polish_seconds < 0:
        raise WinohdlError(f"--polish must be >= 0 seconds, got {polish_seconds}")
    tidy = lambda c: polish(c, budget=polish_seconds, q_max=min(q_max, 2), seed=seed) \
        if c is not None and polish_seconds > 0 else c  # noqa: E731
    rank = rank or lb
    if method == "constructive":
        if rank != lb:
            raise WinohdlError("the constructive method builds R = lower bound only; use --method als or sgd")
        return constructive_card(geometry)
    if method == "sgd":
        from .sgd import SGDConfig, mine_sgd, pick_device
        pick_device(device)
        cfg = SGDConfig(rank=rank, seed=seed, q_max=q_max, exact_loss=exact_loss, device=device)
        for key, value in (sgd_settings or {}).items():
            setattr(cfg, key, value)
        if steps is not None:
            cfg.steps = steps
        ckpt = checkpoint or Path("build") / geometry.name / f"sgd_r{rank}_s{seed}.pt"
        card = tidy(mine_sgd(geometry, cfg, checkpoint=ckpt, resume=resume, budget=budget, progress=progress))
        if card is None:
            raise NoCardFound(f"sgd found no proven card within its budget (checkpoint {ckpt}; "
                              "continue with --resume)")
        return card
    card = tidy(mine_als(geometry, rank, seed, budget or (60.0 if method == "als" else 10.0), q_max))
    if method == "als":
        if card is None:
            raise NoCardFound(f"als found no proven card for {geometry.name} at R={rank} within the budget")
        return card
    base = constructive_card(geometry) if rank == lb else None
    polished = tidy(base)
    library = library_card(geometry)
    found = [c for c in (card, library, polished) if c is not None]
    if not found:
        raise NoCardFound(f"no proven card for {geometry.name} at R={rank} within the budget")
    best = min(found, key=lambda c: cost_key(c.costs))
    key = lambda c: [str(v) for v in cost_key(c.costs)]  # noqa: E731
    report = {"als": key(card) if card is not None else "no proven card within the budget"}
    if library is not None:
        report["library"] = key(library)
    if base is not None:
        report["constructive"] = key(base)
        if polished is not base:
            report["constructive+polish"] = key(polished)
    best.provenance["search"] = report
    return best


def library_card(geometry: Geometry) -> AlgorithmCard | None:
    """The proven card the project ships for this geometry, if any (re-proven on load)."""
    path = LIBRARY / f"{geometry.name}.json"
    return AlgorithmCard.load(path) if path.is_file() else None


def best_known_card(geometry: Geometry) -> AlgorithmCard:
    """The cheapest proven card known without mining: the shipped library card or the constructive one."""
    cands = [c for c in (library_card(geometry), constructive_card(geometry)) if c is not None]
    return min(cands, key=lambda c: cost_key(c.costs))
