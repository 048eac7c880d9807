"""The models the symbolic pass gives a source (:class:`Value`) and a cell's operand (:class:`Operand`),
a field read that may lose bits (:class:`Loss`), and an operand being read field by field."""

from __future__ import annotations

from dataclasses import dataclass, field

from .polynomial import Poly
from .ranges import Fit


@dataclass(frozen=True)
class Value:
    """The model of one source (see the module docstring). ``opaque``: not a polynomial."""

    poly: Poly | None
    known: int | None = None
    bound: tuple[int, int] | None = None  # sound enclosure of poly(x) over the box
    losses: frozenset = frozenset()
    opaque: str = ""

    @property
    def exact(self) -> bool:
        return not self.opaque and self.known is None


@dataclass(frozen=True)
class Operand:
    """An operand as the cell interprets it: exactly ``poly`` (``known`` None) or ``poly`` modulo 2^known."""

    poly: Poly | None
    known: int | None = None
    bound: tuple[int, int] | None = None
    losses: frozenset = frozenset()
    opaque: str = ""


@dataclass(frozen=True)
class Loss:
    """A field whose value was not proven to fit its bits: the bits above are lost or undecided."""

    reader: str
    source: str
    bits: str
    poly: Poly
    lo: int
    hi: int
    fit: Fit


def span(lo_hi, k: int):
    return None if lo_hi is None else (lo_hi[0] * k, lo_hi[1] * k) if k >= 0 else (lo_hi[1] * k, lo_hi[0] * k)


def add_bounds(a, b):
    return None if a is None or b is None else (a[0] + b[0], a[1] + b[1])


def mul_bounds(a, b):
    if a is None or b is None:
        return None
    c = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return min(c), max(c)


def min_known(*ks):
    ks = [k for k in ks if k is not None]
    return min(ks) if ks else None


@dataclass
class Reading:
    """An operand being read field by field: the sum so far, the bits known (None: all), its bound."""

    total: Poly = field(default_factory=Poly)
    known: int | None = None
    bound: tuple[int, int] | None = (0, 0)
    losses: set = field(default_factory=set)

    def constant(self, f, sign_bit: bool) -> None:
        """A constant field: a known bit adds its weight (negative as the sign bit); x/z bits end what is known."""
        if f.constant in ("0", "1"):
            bit = int(f.constant)
            c = -bit << f.offset if sign_bit else bit << f.offset
            self.total = self.total.add_const(c)
            self.bound = add_bounds(self.bound, (c, c))
        else:
            self.known = min_known(self.known, f.offset)

    def exact(self, p: Poly, offset: int, enclosure) -> None:
        self.total = self.total + p.shl(offset)
        self.bound = add_bounds(self.bound, span(enclosure, 1 << offset))

    def modulo(self, p: Poly, offset: int, known: int) -> None:
        """``p`` at ``offset``, of which only the bits below ``known`` are the operand's."""
        self.total = self.total + p.shl(offset)
        self.known = min_known(self.known, known)
        self.bound = None

    def operand(self, required: int | None) -> Operand:
        known = self.known
        if known is not None and required is not None and known >= required:
            known = required
        exact = known is None
        return Operand(self.total, known, self.bound if exact else None, frozenset(self.losses))


__all__ = ["Value", "Operand", "Loss", "Reading", "span", "add_bounds", "mul_bounds", "min_known"]
