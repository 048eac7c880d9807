"""Fast exact mode: alternating least squares on the exact tensor, with fixed entries.

Fits ``T[y,d,g] ~ sum_r AT[y,r] BT[r,d] G[r,g]`` (float64). Each factor update is
a ridge least-squares problem per row, so entries can be held fixed (snapped to
rationals) while the rest refit: the workhorse of rationalisation. The ridge
weight is annealed towards zero so random starts settle on exact solutions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Factors:
    """The three factor matrices (float64) and which entries are fixed (True = fixed)."""

    BT: np.ndarray  # R x |d|
    G: np.ndarray   # R x |g|
    AT: np.ndarray  # |y| x R
    fixed: dict = field(default_factory=dict)  # name -> bool mask of the same shape

    @property
    def rank(self) -> int:
        return self.BT.shape[0]

    def copy(self) -> "Factors":
        return Factors(self.BT.copy(), self.G.copy(), self.AT.copy(), {k: v.copy() for k, v in self.fixed.items()})

    def mask(self, name: str) -> np.ndarray:
        m = getattr(self, name)
        if name not in self.fixed:
            self.fixed[name] = np.zeros(m.shape, dtype=bool)
        return self.fixed[name]


def reconstruct(f: Factors) -> np.ndarray:
    return np.einsum("yr,rd,rg->ydg", f.AT, f.BT, f.G, optimize=True)


def residual(T: np.ndarray, f: Factors) -> float:
    """Root of the summed squared error over every tensor entry."""
    return float(np.sqrt(((reconstruct(f) - T) ** 2).sum()))


def _solve_rows(target: np.ndarray, K: np.ndarray, X: np.ndarray, mask: np.ndarray | None, lam: float) -> np.ndarray:
    """Rows x of X minimising ||target_i - x K||^2 + lam ||x_free||^2, fixed entries kept."""
    R = K.shape[0]
    if mask is None or not mask.any():
        gram = K @ K.T + lam * np.eye(R)
        return np.linalg.solve(gram, K @ target.T).T
    out = X.copy()
    for i in range(X.shape[0]):
        free = ~mask[i]
        if not free.any():
            continue
        rhs = target[i] - X[i, ~free] @ K[~free]
        Kf = K[free]
        out[i, free] = np.linalg.solve(Kf @ Kf.T + lam * np.eye(int(free.sum())), Kf @ rhs)
    return out


def als_sweep(T: np.ndarray, f: Factors, lam: float) -> None:
    """One round of exact least-squares updates of AT, BT and G (in place)."""
    ny, nd, ng = T.shape
    R = f.rank
    K = (f.BT[:, :, None] * f.G[:, None, :]).reshape(R, nd * ng)
    f.AT = _solve_rows(T.reshape(ny, nd * ng), K, f.AT, f.fixed.get("AT"), lam)
    K = (f.AT.T[:, :, None] * f.G[:, None, :]).reshape(R, ny * ng)
    f.BT = _solve_rows(T.transpose(1, 0, 2).reshape(nd, ny * ng), K, f.BT.T,
                       None if "BT" not in f.fixed else f.fixed["BT"].T, lam).T
    K = (f.AT.T[:, :, None] * f.BT[:, None, :]).reshape(R, ny * nd)
    f.G = _solve_rows(T.transpose(2, 0, 1).reshape(ng, ny * nd), K, f.G.T,
                      None if "G" not in f.fixed else f.fixed["G"].T, lam).T


def balance(f: Factors) -> None:
    """Per-term rescaling (identity-preserving) that equalises the three factors' norms."""
    for r in range(f.rank):
        nb, ng, na = (np.linalg.norm(v) for v in (f.BT[r], f.G[r], f.AT[:, r]))
        if min(nb, ng, na) < 1e-12:
            continue
        mean = (nb * ng * na) ** (1 / 3)
        if "BT" in f.fixed and f.fixed["BT"][r].any() or "G" in f.fixed and f.fixed["G"][r].any() \
                or "AT" in f.fixed and f.fixed["AT"][:, r].any():
            continue  # a term with fixed entries keeps its scale
        f.BT[r] *= mean / nb
        f.G[r] *= mean / ng
        f.AT[:, r] *= mean / na


def random_factors(shape: tuple[int, int, int], rank: int, rng: np.random.Generator) -> Factors:
    ny, nd, ng = shape
    return Factors(rng.standard_normal((rank, nd)), rng.standard_normal((rank, ng)),
                   rng.standard_normal((ny, rank)) / np.sqrt(rank))


def fit(T: np.ndarray, f: Factors, sweeps: int = 2000, lam0: float = 1e-2, lam_min: float = 1e-13,
        tol: float = 1e-10, callback=None) -> float:
    """ALS with the ridge weight annealed from lam0 towards lam_min; returns the final residual."""
    lam = lam0
    res = residual(T, f)
    for i in range(sweeps):
        als_sweep(T, f, lam)
        if i % 10 == 9:
            balance(f)
            res = residual(T, f)
            if callback:
                callback(i + 1, res)
            if res < tol:
                break
        lam = max(lam * 0.9, lam_min)
    return residual(T, f)
