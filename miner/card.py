"""The algorithm card: an exact, proven bilinear algorithm ``y = A^T[(G g) * (B^T d)]``.

The only object passed from miner to hdl to sim. A card can only be built
through :meth:`AlgorithmCard.build`, which proves the identity
``sum_r AT[y,r] BT[r,d] G[r,g] == T[y,d,g]`` for every entry in exact integer
arithmetic; loading a card from JSON re-proves it.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from pathlib import Path

import numpy as np

from .costs import card_costs
from .errors import WinohdlError
from .geometry import Geometry
from .rational import parse_matrix, rational_str

FORMAT = "winohdl-card/1"
Matrix = tuple[tuple[Fraction, ...], ...]


class CardError(WinohdlError):
    """A card that is malformed or whose identity does not hold."""


def _integer_rows(matrix: Matrix) -> tuple[list[list[int]], list[int]]:
    """Write each row as integers over a common row denominator: row = ints / den."""
    ints, dens = [], []
    for row in matrix:
        den = math.lcm(1, *(v.denominator for v in row))
        ints.append([int(v * den) for v in row])
        dens.append(den)
    return ints, dens


def prove_identity(geometry: Geometry, BT: Matrix, G: Matrix, AT: Matrix) -> int:
    """Prove ``sum_r AT[y,r] BT[r,d] G[r,g] == T[y,d,g]`` exactly; return the entries checked.

    Each term r is brought to integers (row denominators of B^T and G, column
    denominator of A^T) and every term is put over one common denominator D, so
    the check is ``sum_r (w_r A_r) B_r G_r == D T`` over the integers. It runs in
    int64 when a bound on every partial sum proves int64 cannot overflow, else in
    Python integers. Raises CardError naming the first wrong entry.
    """
    R = len(BT)
    ib, bd = _integer_rows(BT)
    ig, gd = _integer_rows(G)
    ia_t, ad = _integer_rows([tuple(AT[y][r] for y in range(len(AT))) for r in range(R)])
    D = math.lcm(1, *(ad[r] * bd[r] * gd[r] for r in range(R)))
    w = [D // (ad[r] * bd[r] * gd[r]) for r in range(R)]
    iaw = [[a * w[r] for a in ia_t[r]] for r in range(R)]  # R x |y|
    bound = D + sum(max(map(abs, iaw[r]), default=0) * max(map(abs, ib[r]), default=0)
                    * max(map(abs, ig[r]), default=0) for r in range(R))
    dtype = np.int64 if bound < 2**62 else object
    A = np.array(iaw, dtype=dtype).reshape(R, geometry.n_y)
    B = np.array(ib, dtype=dtype).reshape(R, geometry.n_d)
    Gm = np.array(ig, dtype=dtype).reshape(R, geometry.n_g)
    if dtype is np.int64:
        got = np.einsum("ry,rd,rg->ydg", A, B, Gm, optimize=True)
    else:
        got = np.zeros((geometry.n_y, geometry.n_d, geometry.n_g), dtype=object)
        for r in range(R):
            got = got + A[r][:, None, None] * B[r][None, :, None] * Gm[r][None, None, :]
    want = geometry.tensor().astype(dtype) * D
    wrong = np.argwhere(got != want)
    if len(wrong):
        y, d, g = (int(i) for i in wrong[0])
        value = Fraction(int(got[y, d, g]), D)
        raise CardError(f"identity fails at y={y}, d={d}, g={g}: sum_r AT*BT*G = {value}, "
                        f"convolution needs {int(want[y, d, g]) // D} ({len(wrong)} wrong entries)")
    return int(got.size)


def _matrix_json(m: Matrix) -> list[list[str]]:
    return [[rational_str(v) for v in row] for row in m]


@dataclass(frozen=True)
class AlgorithmCard:
    """A proven bilinear algorithm for one geometry.

    Parameters
    ----------
    geometry : Geometry
    BT : R x |d| rationals, the data transform (fc_D).
    G : R x |g| rationals, the kernel transform (fc_F).
    AT : |y| x R rationals, the output transform (fc_C).
    provenance : dict
        How the card was found: method, seed, steps, seconds, device, config.
    entries_checked : int
        Number of tensor entries the exact proof checked (set by :meth:`build`).
    """

    geometry: Geometry
    BT: Matrix
    G: Matrix
    AT: Matrix
    provenance: dict = field(default_factory=dict, compare=False)
    entries_checked: int = 0
    costs_override: dict | None = field(default=None, compare=False)

    @classmethod
    def build(cls, geometry: Geometry, BT, G, AT, provenance: dict | None = None,
              costs: dict | None = None) -> "AlgorithmCard":
        """Make a card from rational matrices, proving the identity first."""
        BT, G, AT = (tuple(tuple(Fraction(v) for v in row) for row in m) for m in (BT, G, AT))
        R = len(BT)
        if R == 0:
            raise CardError("a card needs at least one multiplication")
        shapes = {"BT": (BT, (R, geometry.n_d)), "G": (G, (R, geometry.n_g)), "AT": (AT, (geometry.n_y, R))}
        for name, (m, (rows, cols)) in shapes.items():
            if len(m) != rows or any(len(row) != cols for row in m):
                raise CardError(f"{name} must be {rows} x {cols} for {geometry.name} at R={R}")
        if R < geometry.lower_bound():
            raise CardError(f"R={R} is below the proven lower bound {geometry.lower_bound()}: no exact algorithm exists")
        checked = prove_identity(geometry, BT, G, AT)
        return cls(geometry, BT, G, AT, dict(provenance or {}), checked, costs)

    @property
    def rank(self) -> int:
        return len(self.BT)

    @cached_property
    def costs(self) -> dict:
        base = card_costs(self.geometry, self.BT, self.G, self.AT)
        if self.costs_override:
            base.update(self.costs_override)
        return base

    def note(self) -> str | None:
        g = self.geometry
        if g.no_saving():
            return (f"no saving possible: the lower bound {g.lower_bound()} equals the direct count "
                    f"{g.direct_count} for this geometry")
        return None

    def to_json(self) -> dict:
        out = {
            "format": FORMAT,
            "geometry": self.geometry.to_dict(),
            "rank": self.rank,
            "lower_bound": self.geometry.lower_bound(),
            "BT": _matrix_json(self.BT),
            "G": _matrix_json(self.G),
            "AT": _matrix_json(self.AT),
            "proof": {"exact": True, "entries_checked": self.entries_checked},
            "costs": self.costs,
            "provenance": self.provenance,
        }
        if self.note():
            out["note"] = self.note()
        return out

    @classmethod
    def from_json(cls, data) -> "AlgorithmCard":
        """Parse and re-prove a card; any defect is a CardError naming it."""
        try:
            return cls._from_json(data)
        except CardError:
            raise
        except WinohdlError as exc:
            raise CardError(f"malformed card: {exc}") from None

    @classmethod
    def _from_json(cls, data) -> "AlgorithmCard":
        if not isinstance(data, dict):
            raise CardError("a card must be a JSON object")
        if data.get("format") != FORMAT:
            raise CardError(f"unknown card format {data.get('format')!r}, expected {FORMAT!r}")
        if "geometry" not in data:
            raise CardError("card has no geometry")
        geometry = Geometry.from_dict(data["geometry"])
        rank = data.get("rank")
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
            raise CardError(f"card rank must be a positive integer, got {rank!r}")
        for key in ("BT", "G", "AT"):
            if key not in data:
                raise CardError(f"card has no {key} matrix")
        BT = parse_matrix(data["BT"], (rank, geometry.n_d), "BT")
        G = parse_matrix(data["G"], (rank, geometry.n_g), "G")
        AT = parse_matrix(data["AT"], (geometry.n_y, rank), "AT")
        lb = data.get("lower_bound")
        if lb is not None and lb != geometry.lower_bound():
            raise CardError(f"card claims lower bound {lb}, the geometry's proven bound is {geometry.lower_bound()}")
        prov = data.get("provenance", {})
        costs = data.get("costs", {})
        override = None
        if isinstance(costs, dict) and costs.get("adders_exact"):
            override = {k: costs[k] for k in ("adders", "adders_exact", "depth") if k in costs}
        return cls.build(geometry, BT, G, AT, prov if isinstance(prov, dict) else {}, override)

    def save(self, path) -> Path:
        """Write the card as JSON atomically (temp file in the same folder, then rename)."""
        return write_json_atomic(path, self.to_json())

    @classmethod
    def load(cls, path) -> "AlgorithmCard":
        path = Path(path)
        try:
            text = path.read_text()
        except OSError as exc:
            raise CardError(f"cannot read card {path}: {exc.strerror or exc}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CardError(f"card {path} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
        return cls.from_json(data)

    def summary(self) -> str:
        g, c = self.geometry, self.costs
        lines = [
            f"geometry   {g.describe()}",
            f"R          {self.rank} multiplications (lower bound {g.lower_bound()}, direct {g.direct_count})"
            + ("  certified minimal" if self.rank == g.lower_bound() else ""),
            f"proof      exact, {self.entries_checked} tensor entries checked in rational arithmetic",
            f"adders     B^T {c['adders']['BT']}, G {c['adders']['G']}, A^T {c['adders']['AT']}"
            + ("" if c.get("adders_exact") else " (estimate: non-zeros minus rows)"),
            f"constants  max denominator {c['max_denominator']}, max |constant| {c['max_abs_constant']}",
            f"method     {self.provenance.get('method', '?')}",
        ]
        if self.note():
            lines.append(f"note       {self.note()}")
        return "\n".join(lines)


def write_json_atomic(path, data) -> Path:
    """Write JSON to ``path`` through a temp file and a rename, so no half-written file remains."""
    return write_text_atomic(path, json.dumps(data, indent=1) + "\n")


def write_text_atomic(path, text: str) -> Path:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise WinohdlError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise WinohdlError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
