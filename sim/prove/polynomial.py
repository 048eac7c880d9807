"""Polynomials with integer coefficients over the proof's input variables.

A variable is one input word at one time: ``d[3]`` seen through ``k`` registers is the
variable ``d[3]@t-k`` (the value the port had k cycles before the cycle observed), so a
pure pipeline is a polynomial map and a register bypassed in one path shows up as a
monomial with the wrong delay. Each variable has its box (the port word's range); one-bit
ports (``rst``, ``in_valid``) are Boolean, so ``x*x = x`` for them.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_DELAY = 4096


class TooDeep(ValueError):
    """More registers on one path than the proof tracks."""


@dataclass(frozen=True)
class Variable:
    port: str
    element: int
    delay: int
    lo: int
    hi: int
    boolean: bool
    words: int  # elements of the port (an index is shown only when there are several)
    label: str = ""  # the name of a variable that is not a port's word (a bit field: sim.prove.fields)

    def name(self, show_delay: bool) -> str:
        base = self.label or (f"{self.port}[{self.element}]" if self.words > 1 else self.port)
        return f"{base}@t-{self.delay}" if show_delay else base

    @property
    def negated(self) -> bool:
        """A complement variable ``~x`` (= 1 - x) of a Boolean x."""
        return self.port.startswith("~")


class VarTable:
    """The variables of one proof (ids are list indices)."""

    def __init__(self):
        self.vars: list[Variable] = []
        self._ids: dict[tuple, int] = {}
        self.show_delay = False

    def var(self, port: str, element: int, delay: int, lo: int, hi: int, words: int = 1, label: str = "") -> int:
        key = (port, element, delay)
        if key not in self._ids:
            if delay > MAX_DELAY:
                raise TooDeep(f"more than {MAX_DELAY} registers on one path")
            self._ids[key] = len(self.vars)
            self.vars.append(Variable(port, element, delay, lo, hi, lo == 0 and hi == 1, words, label))
        return self._ids[key]

    def shifted(self, v: int, n: int) -> int:
        x = self.vars[v]
        return self.var(x.port, x.element, x.delay + n, x.lo, x.hi, x.words, x.label)

    def complement(self, v: int) -> int:
        """The variable ``1 - x`` of a Boolean x (and back). Keeping both lets a chain of resets
        ``x * (1 - r1) * (1 - r2) ...`` stay one monomial instead of 2^n; ``x * ~x`` is 0."""
        x = self.vars[v]
        port = x.port[1:] if x.negated else "~" + x.port
        label = x.label and (x.label[1:] if x.negated else "~" + x.label)
        return self.var(port, x.element, x.delay, 0, 1, x.words, label)

    def name(self, v: int) -> str:
        return self.vars[v].name(self.show_delay)

    def boolean(self, v: int) -> bool:
        return self.vars[v].boolean

    def box(self, v: int) -> tuple[int, int]:
        x = self.vars[v]
        return x.lo, x.hi


def add_terms(t: dict, terms: dict) -> None:
    """Add ``terms`` (monomial -> coefficient) into ``t`` in place, dropping what cancels."""
    for m, c in terms.items():
        s = t.get(m, 0) + c
        if s:
            t[m] = s
        else:
            t.pop(m, None)


class Poly:
    """An immutable polynomial ``{monomial: coefficient}``; a monomial is a sorted tuple of variable
    ids (repeated for a power), ``()`` the constant. No zero coefficients are stored."""

    __slots__ = ("terms", "_hash")

    def __init__(self, terms: dict | None = None):
        self.terms = terms or {}
        self._hash = None

    # ---- construction ---------------------------------------------------------------------------
    @staticmethod
    def const(c: int) -> "Poly":
        return Poly({(): c} if c else {})

    @staticmethod
    def var(v: int, coeff: int = 1) -> "Poly":
        return Poly({(v,): coeff} if coeff else {})

    @staticmethod
    def linear(coeffs: dict[int, int], constant: int = 0) -> "Poly":
        t = {(v,): c for v, c in coeffs.items() if c}
        if constant:
            t[()] = constant
        return Poly(t)

    # ---- queries --------------------------------------------------------------------------------
    def __eq__(self, other) -> bool:
        return isinstance(other, Poly) and self.terms == other.terms

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self.terms.items()))
        return self._hash

    def __len__(self) -> int:
        return len(self.terms)

    def __bool__(self) -> bool:
        return bool(self.terms)

    @property
    def is_const(self) -> bool:
        return not self.terms or (len(self.terms) == 1 and () in self.terms)

    @property
    def constant(self) -> int:
        return self.terms.get((), 0)

    @property
    def degree(self) -> int:
        return max((len(m) for m in self.terms), default=0)

    def variables(self) -> set[int]:
        return {v for m in self.terms for v in m}

    def multilinear(self) -> bool:
        return all(len(set(m)) == len(m) for m in self.terms)

    def divisible(self, k: int) -> bool:
        """Every coefficient is a multiple of 2^k."""
        m = (1 << k) - 1
        return all(not c & m for c in self.terms.values())

    def evaluate(self, x: dict[int, int]) -> int:
        total = 0
        for m, c in self.terms.items():
            p = c
            for v in m:
                p *= x.get(v, 0)
                if not p:
                    break
            total += p
        return total

    # ---- arithmetic -----------------------------------------------------------------------------
    def __add__(self, other: "Poly") -> "Poly":
        if len(other.terms) > len(self.terms):
            self, other = other, self
        t = dict(self.terms)
        add_terms(t, other.terms)
        return Poly(t)

    def __neg__(self) -> "Poly":
        return Poly({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: "Poly") -> "Poly":
        return self + (-other)

    def scale(self, k: int) -> "Poly":
        if not k:
            return Poly()
        return Poly({m: c * k for m, c in self.terms.items()})

    def shl(self, k: int) -> "Poly":
        return self.scale(1 << k)

    def div_pow2(self, k: int) -> "Poly":
        """Exact division by 2^k (call :meth:`divisible` first)."""
        return Poly({m: c >> k for m, c in self.terms.items()})

    def add_const(self, c: int) -> "Poly":
        return self + Poly.const(c)

    def mul(self, other: "Poly", table: VarTable) -> "Poly":
        if self.is_const:
            return other.scale(self.constant)
        if other.is_const:
            return self.scale(other.constant)
        t: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                m = _merge(m1, m2, table)
                if m is None:
                    continue
                s = t.get(m, 0) + c1 * c2
                if s:
                    t[m] = s
                else:
                    t.pop(m, None)
        return Poly(t)

    def one_minus(self, table: VarTable) -> "Poly":
        """``1 - self``; for a single Boolean variable, its complement variable."""
        if len(self.terms) == 1:
            ((m, c),) = self.terms.items()
            if c == 1 and len(m) == 1 and table.boolean(m[0]):
                return Poly.var(table.complement(m[0]))
        return Poly.const(1) - self

    def canonical(self, table: VarTable, limit: int = 1 << 16) -> "Poly | None":
        """The same function with every complement ``~x`` written as ``1 - x`` (unique: a polynomial
        multilinear in Booleans is determined by its values); None when it would pass ``limit`` terms."""
        if not any(table.vars[v].negated for m in self.terms for v in m):
            return self
        out: dict = {}
        for m, c in self.terms.items():
            parts = [((), c)]
            for v in m:
                nxt = []
                for mm, cc in parts:
                    if table.vars[v].negated:
                        nxt.append((mm, cc))
                        nxt.append((mm + (table.complement(v),), -cc))
                    else:
                        nxt.append((mm + (v,), cc))
                parts = nxt
                if len(parts) > limit:
                    return None
            for mm, cc in parts:
                key = _merge(tuple(sorted(mm)), (), table)
                if key is None:
                    continue
                s = out.get(key, 0) + cc
                if s:
                    out[key] = s
                else:
                    out.pop(key, None)
            if len(out) > limit:
                return None
        return Poly(out)

    def reduced(self, k: int) -> "Poly":
        """The representative modulo 2^k with every coefficient in [-2^(k-1), 2^(k-1))."""
        mod, half = 1 << k, 1 << (k - 1) if k else 0
        t = {}
        for m, c in self.terms.items():
            r = (c + half) % mod - half if k else 0
            if r:
                t[m] = r
        return Poly(t)

    def compact(self, k: int) -> "Poly":
        """The same polynomial modulo 2^k with every coefficient of magnitude >= 2^k replaced by its
        smallest residue (small coefficients are kept as they are)."""
        if all(-(1 << k) < c < (1 << k) for c in self.terms.values()):
            return self
        mod, half = 1 << k, 1 << (k - 1) if k else 0
        t = {}
        for m, c in self.terms.items():
            r = c if -mod < c < mod else ((c + half) % mod - half if k else 0)
            if r:
                t[m] = r
        return Poly(t)

    def delayed(self, n: int, table: VarTable) -> "Poly":
        """The same polynomial seen ``n`` registers later (every variable's delay + n)."""
        if not n:
            return self
        return Poly({tuple(sorted(table.shifted(v, n) for v in m)): c for m, c in self.terms.items()})

    def text(self, table: VarTable, limit: int = 6) -> str:
        items = sorted(self.terms.items(), key=lambda mc: (len(mc[0]), mc[0]))
        parts = [monomial_text(m, table, c) for m, c in items[:limit]]
        more = f" + ... ({len(items) - limit} more)" if len(items) > limit else ""
        return (" + ".join(parts) or "0") + more


def _merge(m1: tuple, m2: tuple, table: VarTable) -> tuple | None:
    """The product of two monomials (None when it is 0: a Boolean times its complement)."""
    m = tuple(sorted(m1 + m2))
    if len(m) > 1 and any(m[i] == m[i + 1] and table.boolean(m[i]) for i in range(len(m) - 1)):
        out = []
        for v in m:
            if out and out[-1] == v and table.boolean(v):
                continue
            out.append(v)
        m = tuple(out)
    if any(table.vars[v].negated for v in m):
        s = set(m)
        if any(table.vars[v].negated and table.complement(v) in s for v in m):
            return None
    return m


PORT_ORDER = {"d": 0, "g": 1, "u": 2, "in_valid": 3, "rst": 4}


def monomial_text(m: tuple, table: VarTable, coeff: int | None = None) -> str:
    def key(v):
        x = table.vars[v]
        return PORT_ORDER.get(x.port.lstrip("~"), 9), x.port, x.element, x.delay
    names = "*".join(table.name(v) for v in sorted(m, key=key)) or "1"
    if coeff is None:
        return names
    if not m:
        return str(coeff)
    return names if coeff == 1 else f"-{names}" if coeff == -1 else f"{coeff}*{names}"
