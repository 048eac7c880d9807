"""Bit fields of a value, exactly: what a split multiplier reads of its operands.

A multiplier whose operand is wider than a hard block's is split (``hdl.components.emit_product``):
the operand ``x`` is read as chunks -- its low bits unsigned, its top bits signed, single bits as the
selects of masked, shifted copies -- and the partial products are summed. A chunk is not a polynomial
of the inputs, but it is an exact integer function of the value ``P`` it is cut from. Every field is
written with one kind of new variable, the floor ``H_c = floor(P / 2^c)`` (``H_0 = P``):

- the unsigned field of bits ``[a, b)`` is ``H_a - 2^(b-a) H_b``;
- the signed field ``[a, b)`` is ``H_a - 2^(b-a) (H_(b-1) - H_b)``, which is ``H_a`` when ``P``
  fits ``b`` bits signed (the *exactness obligation*, decided over the whole input box).

So the chunks of a split operand telescope: ``(P - 2^k H_k) + 2^k H_k = P``, and the sum of the
partial products is ``P * Q`` again, a polynomial that compares monomial by monomial with the
convolution. A field is a variable of its own too (``bits[i][b-1:a]``, with its exact box: ``[0,
2^n)``, a bit is Boolean) so that a partial product's range is decided without the floors, whose
boxes are independent of the inputs they are cut from (sound, but loose). :meth:`Fields.normalise`
replaces fields by their definitions; what is left of the floors after that is a value that is not
a polynomial of the inputs (a real truncation, or a mistake).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .polynomial import Poly, VarTable, add_terms

FIELD, FLOOR = "field", "floor"
ATOM_PORTS = (FIELD, FLOOR)


@dataclass(frozen=True)
class Atom:
    """One field or floor variable: ``definition`` (at delay 0, in the inputs and floors) is its value;
    ``text`` says what it is and ``cell`` where it was read first."""

    kind: str
    definition: Poly | None  # None for a floor (it is its own definition)
    text: str
    cell: str
    base: Poly | None = None  # a floor's floor(base / 2^shift)
    shift: int = 0


@dataclass(frozen=True)
class Obligation:
    """An exactness obligation of a signed field that was not proven (``ok`` None) or fails (False)."""

    text: str
    cell: str
    ok: bool | None
    witness: dict | None = None


def _anchor(p: Poly, table: VarTable) -> tuple[Poly, int]:
    """``p`` moved to the earliest cycle (its smallest delay 0) and that delay: one variable per value,
    whatever the registers it passed."""
    delays = [table.vars[v].delay for m in p.terms for v in m]
    m = min(delays, default=0)
    return (p.delayed(-m, table) if m else p), m


class Fields:
    """The bit-field and floor variables of one proof (see the module docstring)."""

    def __init__(self, table: VarTable, ranges):
        self.t, self.ranges = table, ranges
        self.atoms: list[Atom] = []
        self._ids: dict = {}
        self._defs: dict = {}  # (atom id, delay) -> definition at that delay
        self._relaxed: dict = {}  # (floor id, delay) -> its base / 2^shift
        self.obligations: list[Obligation] = []
        ranges.fields = self

    # ---- queries ----------------------------------------------------------------------------------
    def is_atom(self, v: int) -> bool:
        return self.t.vars[v].port.lstrip("~") in ATOM_PORTS

    def has_atoms(self, p: Poly | None) -> bool:
        return p is not None and bool(self.atoms) and any(self.is_atom(v) for m in p.terms for v in m)

    # ---- construction -----------------------------------------------------------------------------
    def _new(self, key, kind: str, definition: Poly | None, delay: int, box, text: str, cell: str,
             label: str, base: Poly | None = None, shift: int = 0) -> int:
        if key not in self._ids:
            self._ids[key] = len(self.atoms)
            self.atoms.append(Atom(kind, definition, text, cell, base, shift))
        i = self._ids[key]
        return self.t.var(kind, i, delay, *box, label=label.format(i=i))

    def _enclosure(self, p: Poly) -> tuple[int, int]:
        if p.degree <= 1 and not self.has_atoms(p):
            r = self.ranges.linear_range(p)
            return r.lo, r.hi
        return self.ranges.bound(p)  # sound; the exact range of a wide product costs more than it helps

    def floor(self, p: Poly, c: int, cell: str) -> Poly:
        """``floor(p / 2^c)`` as a polynomial in the inputs and floor variables."""
        if c <= 0:
            return p.shl(-c)
        k = p.constant >> c  # floor((q + 2^c k) / 2^c) = floor(q / 2^c) + k
        low = p.add_const(-(k << c))
        if low.is_const:
            return Poly.const(k)
        g = min((x & -x).bit_length() - 1 for x in low.terms.values())
        if g >= c:
            return low.div_pow2(c).add_const(k)
        low, c = low.div_pow2(g), c - g  # floor(2^g q / 2^c) = floor(q / 2^(c-g))
        high = Poly.const(k)
        lo, hi = self._enclosure(low)
        if lo >> c == hi >> c:
            return high.add_const(lo >> c)
        base, delay = _anchor(low, self.t)
        v = self._new((FLOOR, base, c), FLOOR, None, delay, (lo >> c, hi >> c),
                      f"floor(({base.text(self.t, 3)}) / 2^{c})", cell, "floor{i}", base, c)
        return high + Poly.var(v)

    def field(self, p: Poly, a: int, n: int, signed: bool | None, cell: str) -> Poly:
        """Bits ``[a, a+n)`` of the integer ``p`` (two's complement), read signed or unsigned (None: either,
        the reader only needs its bits; the floor when ``p`` fits ``a+n`` bits signed, else unsigned)."""
        p = self.normalise(p)
        b = a + n
        if signed is not False:
            fit = self.ranges.fits(p, -(1 << (b - 1)), (1 << (b - 1)) - 1)
            if fit.ok:
                return self.floor(p, a, cell)
        if signed:
            self.obligations.append(Obligation(
                f"the value read signed from bits [{b - 1}:{a}] fits {b} bits ({fit.method})", cell, fit.ok,
                fit.witness))
            definition = self.floor(p, a, cell) - (self.floor(p, b - 1, cell) - self.floor(p, b, cell)).shl(n)
            box = (-(1 << (n - 1)), (1 << (n - 1)) - 1)
        else:
            definition = self.floor(p, a, cell) - self.floor(p, b, cell).shl(n)
            box = (0, (1 << n) - 1)
        if definition.is_const:
            return definition
        base, delay = _anchor(definition, self.t)
        v = self._new((FIELD, base), FIELD, base, delay, box,
                      f"bits [{b - 1}:{a}] of {'signed ' if signed else ''}{p.text(self.t, 3)}", cell,
                      "bits{i}" + f"[{b - 1}:{a}]")
        return Poly.var(v)

    # ---- normal form ------------------------------------------------------------------------------
    def definition(self, v: int) -> Poly:
        """A field variable's value at its delay (its complement: 1 minus it)."""
        x = self.t.vars[v]
        key = (x.element, x.delay)
        if key not in self._defs:
            self._defs[key] = self.atoms[x.element].definition.delayed(x.delay, self.t)
        d = self._defs[key]
        return Poly.const(1) - d if x.negated else d

    def normalise(self, p: Poly) -> Poly:
        """``p`` with every field replaced by its definition: inputs and floors only. Two values that
        are equal for every input have equal normal forms when their floors cancel (chunks of one
        operand summed back); what remains of a floor is a value that is not a polynomial."""
        if not self.atoms or not any(self.t.vars[v].port.lstrip("~") == FIELD for m in p.terms for v in m):
            return p
        out: dict = {}
        for m, c in p.terms.items():
            term = Poly.const(c)
            rest = []
            for v in m:
                if self.t.vars[v].port.lstrip("~") == FIELD:
                    term = term.mul(self.definition(v), self.t)
                else:
                    rest.append(v)
            if rest:
                term = term.mul(Poly({tuple(rest): 1}), self.t)
            add_terms(out, term.terms)
        return Poly(out)

    def relaxed(self, p: Poly) -> Poly:
        """``p`` with every floor ``floor(q / 2^c)`` taken as ``q / 2^c`` (rational coefficients). Chunks
        that sum back cancel either way; what is left shows the partial products that do not (a shift,
        a slice or a register of one of them), as monomials of the inputs."""
        p = self.normalise(p)
        out = Poly()
        for m, c in p.terms.items():
            term, rest = Poly.const(Fraction(c)), []
            for v in m:
                x = self.t.vars[v]
                if x.port.lstrip("~") != FLOOR:
                    rest.append(v)
                    continue
                key = (x.element, x.delay)
                if key not in self._relaxed:
                    a = self.atoms[x.element]
                    self._relaxed[key] = self.relaxed(a.base.delayed(x.delay, self.t)).scale(Fraction(1, 1 << a.shift))
                q = self._relaxed[key]
                term = term.mul(Poly.const(1) - q if x.negated else q, self.t)
            out = out + (term.mul(Poly({tuple(rest): 1}), self.t) if rest else term)
        return out


__all__ = ["Fields", "Atom", "Obligation", "FIELD", "FLOOR", "ATOM_PORTS"]
