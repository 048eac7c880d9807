"""The algorithm card: an exact, proven bilinear algorithm ``y = A^T[(G g) * (B^T d)]``.

The only object passed from miner to hdl to sim. A card can only be built
through :meth:`AlgorithmCard.build`, which proves the identity
``sum_r AT[y,r] BT[r,d] G[r,g] == T[y,d,g]`` for every entry in exact integer
arithmetic; loading a card from JSON re-proves it.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from .errors import CardError, LimitError, WinohdlError
from .geometry import Geometry
from .io import read_json, write_json_atomic
from .limits import PROOF_WORK, RANK
from .rational import parse_matrix, rational_str

FORMAT = "winohdl-card/1"
Matrix = tuple[tuple[Fraction, ...], ...]
Rows = list[list[Fraction]]
CARD_KEYS = {"format", "geometry", "rank", "lower_bound", "BT", "G", "AT", "proof", "costs", "provenance", "note"}

__all__ = ["AlgorithmCard", "CardError", "normalise_terms", "prove_identity"]


def _primitive_scale(vec) -> Fraction:
    """The factor that makes ``vec`` a primitive integer vector with a positive leading entry."""
    nz = [v for v in vec if v != 0]
    if not nz:
        return Fraction(1)
    den = math.lcm(*(v.denominator for v in nz))
    num = math.gcd(*((v * den).numerator for v in nz))
    return Fraction(den, num) * (1 if nz[0] > 0 else -1)


def normalise_terms(BT, G, AT) -> tuple[Rows, Rows, Rows]:
    """Per-term rescaling that keeps the identity: B^T rows and A^T columns become
    primitive integer vectors, their scale moves into G (often computed offline)."""
    BT, G, AT = [list(r) for r in BT], [list(r) for r in G], [list(r) for r in AT]
    for r in range(len(BT)):
        sb = _primitive_scale(BT[r])
        sa = _primitive_scale([row[r] for row in AT])
        BT[r] = [v * sb for v in BT[r]]
        for row in AT:
            row[r] *= sa
        G[r] = [v / (sa * sb) for v in G[r]]
    return BT, G, AT


def _integer_rows(matrix: Matrix, cap_bits: int, too_costly) -> tuple[list[list[int]], list[int]]:
    """Write each row as integers over a common row denominator: row = ints / den.

    A row denominator above ``cap_bits`` bits calls ``too_costly()`` (which raises) before any
    arithmetic on it: the lcm is built one entry at a time and checked at each step.
    """
    ints, dens = [], []
    for row in matrix:
        den = 1
        for v in row:
            den = math.lcm(den, v.denominator)
            if den.bit_length() > cap_bits:
                too_costly()
        ints.append([v.numerator * (den // v.denominator) for v in row])
        dens.append(den)
    return ints, dens


def _short(x: Fraction) -> str:
    """A rational for a message: written out when short, else its size (str() of a huge int fails)."""
    if max(abs(x.numerator), x.denominator).bit_length() <= 200:
        return str(x)
    return f"a rational of about {max(abs(x.numerator), x.denominator).bit_length() * 3 // 10} digits"


def prove_identity(geometry: Geometry, BT: Matrix, G: Matrix, AT: Matrix) -> int:
    """Prove ``sum_r AT[y,r] BT[r,d] G[r,g] == T[y,d,g]`` exactly; return the entries checked.

    Each term r is brought to integers (row denominators of B^T and G, column
    denominator of A^T) and every term is put over one common denominator D, so
    the check is ``sum_r (w_r A_r) B_r G_r == D T`` over the integers. It runs in
    int64 when a bound on every partial sum proves int64 cannot overflow, else in
    Python integers. Raises CardError naming the first wrong entry.

    The Python-integer path costs about R x |T| x (64-bit words of the bound); above the
    proof-work limit it raises LimitError before doing it (the denominators are checked as
    they are combined, so a card cannot make the checks themselves expensive).
    """
    R = len(BT)
    T = geometry.n_y * geometry.n_d * geometry.n_g
    limit = PROOF_WORK.value
    cap_bits = max(62, 64 * (limit // max(1, R * T)))  # beyond this the big-integer path is over the limit

    def too_costly(words: int | None = None):
        need = f"about {R * T * words}" if words else f"more than {limit}"
        raise LimitError(f"the card's exact proof needs {need} word operations of big-integer arithmetic "
                         f"(R={R} terms x {T} tensor entries x 64-bit words of its constants' common "
                         f"denominator), above the limit of {limit} (raise it with {PROOF_WORK.env}=N)")

    ib, bd = _integer_rows(BT, cap_bits, too_costly)
    ig, gd = _integer_rows(G, cap_bits, too_costly)
    ia_t, ad = _integer_rows([tuple(AT[y][r] for y in range(len(AT))) for r in range(R)], cap_bits, too_costly)
    D = 1
    for r in range(R):
        D = math.lcm(D, ad[r] * bd[r] * gd[r])
        if D.bit_length() > cap_bits:
            too_costly()
    w = [D // (ad[r] * bd[r] * gd[r]) for r in range(R)]
    iaw = [[a * w[r] for a in ia_t[r]] for r in range(R)]  # R x |y|
    bound = D + sum(max(map(abs, iaw[r]), default=0) * max(map(abs, ib[r]), default=0)
                    * max(map(abs, ig[r]), default=0) for r in range(R))
    dtype = np.int64 if bound < 2**62 else object
    if dtype is object and R * T * -(-bound.bit_length() // 64) > limit:
        too_costly(-(-bound.bit_length() // 64))
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
        raise CardError(f"identity fails at y={y}, d={d}, g={g}: sum_r AT*BT*G = {_short(value)}, "
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
        How the card was found: method, seed, steps, seconds, device, config (a record
        for people; nothing is computed from it).
    entries_checked : int
        Number of tensor entries the exact proof checked (set by :meth:`build`).

    Costs are not part of a card: they depend on the hardware and are always
    recomputed (by the hardware layer's cost function), never read from a file.
    """

    geometry: Geometry
    BT: Matrix
    G: Matrix
    AT: Matrix
    provenance: dict = field(default_factory=dict, compare=False)
    entries_checked: int = 0

    @classmethod
    def build(cls, geometry: Geometry, BT, G, AT, provenance: dict | None = None) -> "AlgorithmCard":
        """Make a card from rational matrices, proving the identity first."""
        BT, G, AT = (tuple(tuple(Fraction(v) for v in row) for row in m) for m in (BT, G, AT))
        R = len(BT)
        if R == 0:
            raise CardError("a card needs at least one multiplication")
        RANK.check(R, "the card's rank R")
        shapes = {"BT": (BT, (R, geometry.n_d)), "G": (G, (R, geometry.n_g)), "AT": (AT, (geometry.n_y, R))}
        for name, (m, (rows, cols)) in shapes.items():
            if len(m) != rows or any(len(row) != cols for row in m):
                raise CardError(f"{name} must be {rows} x {cols} for {geometry.name} at R={R}")
        if R < geometry.lower_bound():
            raise CardError(f"R={R} is below the proven lower bound {geometry.lower_bound()}: no exact algorithm exists")
        checked = prove_identity(geometry, BT, G, AT)
        return cls(geometry, BT, G, AT, dict(provenance or {}), checked)

    @property
    def rank(self) -> int:
        return len(self.BT)

    def content_hash(self) -> str:
        """SHA-256 of the algorithm itself (geometry and the three matrices, canonical JSON):
        equal for equal algorithms whatever their provenance."""
        body = {"geometry": self.geometry.to_dict(), "BT": _matrix_json(self.BT), "G": _matrix_json(self.G),
                "AT": _matrix_json(self.AT)}
        return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()

    def max_denominator(self) -> int:
        return max((v.denominator for m in (self.BT, self.G, self.AT) for row in m for v in row), default=1)

    def max_abs_constant(self) -> Fraction:
        return max((abs(v) for m in (self.BT, self.G, self.AT) for row in m for v in row), default=Fraction(0))

    def note(self) -> str | None:
        g = self.geometry
        if g.no_saving():
            return (f"no saving possible: the lower bound {g.lower_bound()} equals the direct count "
                    f"{g.direct_count} for this geometry")
        return None

    def to_json(self, costs: dict | None = None) -> dict:
        """The card as JSON; ``costs`` (computed by the caller's cost function) is written for
        people to read and ignored when the card is loaded."""
        out = {
            "format": FORMAT,
            "geometry": self.geometry.to_dict(),
            "rank": self.rank,
            "lower_bound": self.geometry.lower_bound(),
            "BT": _matrix_json(self.BT),
            "G": _matrix_json(self.G),
            "AT": _matrix_json(self.AT),
            "proof": {"exact": True, "entries_checked": self.entries_checked},
            "costs": costs or {},
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
        unknown = sorted(set(data) - CARD_KEYS)
        if unknown:
            raise CardError(f"unknown card field {unknown[0]!r}")
        if data.get("format") != FORMAT:
            raise CardError(f"unknown card format {data.get('format')!r}, expected {FORMAT!r}")
        if "geometry" not in data:
            raise CardError("card has no geometry")
        geometry = Geometry.from_dict(data["geometry"])
        rank = data.get("rank")
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
            raise CardError(f"card rank must be a positive integer, got {rank!r}")
        RANK.check(rank, "the card's rank R")
        for key in ("BT", "G", "AT"):
            if key not in data:
                raise CardError(f"card has no {key} matrix")
        BT = parse_matrix(data["BT"], (rank, geometry.n_d), "BT")
        G = parse_matrix(data["G"], (rank, geometry.n_g), "G")
        AT = parse_matrix(data["AT"], (geometry.n_y, rank), "AT")
        lb = data.get("lower_bound")
        if lb is not None and lb != geometry.lower_bound():
            raise CardError(f"card claims lower bound {lb}, the geometry's proven bound is {geometry.lower_bound()}")
        if isinstance(lb, bool) or lb is not None and not isinstance(lb, int):
            raise CardError(f"card lower_bound must be an integer, got {lb!r}")
        prov = data.get("provenance", {})
        if not isinstance(prov, dict):
            raise CardError(f"card provenance must be a JSON object, got {type(prov).__name__}")
        # "costs", "proof" and "note" are recomputed, never read: a card claiming 0 adders changes nothing
        return cls.build(geometry, BT, G, AT, prov)

    def save(self, path, costs: dict | None = None) -> Path:
        """Write the card as JSON atomically (temp file in the same folder, then rename)."""
        return write_json_atomic(path, self.to_json(costs))

    @classmethod
    def load(cls, path) -> "AlgorithmCard":
        """Read (size, encoding and depth limits), parse and re-prove a card file."""
        path = Path(path)
        try:
            data = read_json(path, "card")
        except CardError:
            raise
        except WinohdlError as exc:
            raise CardError(str(exc)) from None
        try:
            return cls.from_json(data)
        except CardError as exc:
            raise CardError(f"card {path}: {exc}") from None

    def summary(self) -> str:
        g = self.geometry
        lines = [
            f"geometry   {g.describe()}",
            f"R          {self.rank} multiplications (lower bound {g.lower_bound()}, direct {g.direct_count})"
            + ("  certified minimal" if self.rank == g.lower_bound() else ""),
            f"proof      exact, {self.entries_checked} tensor entries checked in rational arithmetic",
            f"constants  max denominator {self.max_denominator()}, max |constant| {self.max_abs_constant()}",
            f"method     {self.provenance.get('method', '?')}",
        ]
        if self.note():
            lines.append(f"note       {self.note()}")
        return "\n".join(lines)

