"""The output stage as a function of one integer: rounding, saturation, anything not polynomial.

Where the symbolic pass meets logic that is not a polynomial (``q >> s`` of a q that is
not a multiple of 2^s, comparisons, multiplexers on them), the output word depends on the
input only through polynomials of the form ``alpha * y + beta`` with ``y`` the exact
convolution value of that output (checked coefficient by coefficient). The claim left is
one-dimensional: for every integer y in y's range over the input box, the logic computes
the declared quantisation of y.

It is proven by case analysis over rectangles. Write ``y = 2^K t + r`` with
``0 <= r < 2^K`` and ``K = shift + 1``; on a rectangle of (t, r) every signal of the
logic is an affine function ``a t + c r + b`` (exactly: each floor, wrap, comparison and
multiplexer either is affine there or splits the rectangle at the point where it stops
being so). The declared quantisation is affine on pieces too: rounding commutes with
adding multiples of 2^(shift+1) (``round((2^K t + r) / 2^s) = 2^(K-s) t + round(r / 2^s)``,
parity included), so it is ``2^(K-s) t + rho`` on each r-interval where ``rho =
round(r / 2^s)`` is constant (monotone, found by bisection on the reference definition),
clamped at thresholds in t. On each common piece the two affine functions are compared at
the rectangle's corners, which decides them everywhere on it. A piece count limit makes
the analysis give up (undecided), never guess.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

from .affine import Aff, Region, Split, ceil_div, joint_delay, probe_points
from .netlist import Unsupported, segment
from .polynomial import Poly
from .spec import quantise_reference, round_shift
from .symbolic import Symbolic

MAX_REGIONS = 50_000


class NotAffine(Unsupported):
    """A polynomial entering the output logic is not ``alpha * y + beta`` (y: this output's convolution)."""

    def __init__(self, source: str, poly: Poly, alpha: int, monomial: tuple, got: int, want: int, text: str):
        super().__init__(f"{source} = {text} is not a multiple of this output's convolution plus a constant")
        self.source, self.poly, self.alpha = source, poly, alpha
        self.monomial, self.got, self.want = monomial, got, want


class UndefinedBits(Exception):
    """An x (or z) bit reaches the output for some y."""


@dataclass
class ConeResult:
    ok: bool | None
    regions: int = 0
    mismatches: list = field(default_factory=list)  # (y, implementation, declared)
    reason: str = ""
    undefined: bool = False
    delay: int | None = None


class ConeChecker:
    """Case analysis of one output word's logic as a function of the scalar y (module docstring).

    Parameters
    ----------
    sym : Symbolic
        The symbolic pass over the netlist (its polynomial sources are the frontier).
    y_poly : Poly
        The exact convolution of this output word, variables at delay 0.
    shift : int
        Rounding shift of the declaration (0 for an exact output): K = shift + 1.
    """

    def __init__(self, sym: Symbolic, y_poly: Poly, shift: int, max_regions: int = MAX_REGIONS):
        self.sym, self.n, self.y = sym, sym.netlist, y_poly
        self.K = shift + 1
        self.max_regions = max_regions
        self._frontier: dict = {}
        self._ref = next(iter(m for m in y_poly.terms if m), None)
        self.memo: dict = {}
        self.R: Region | None = None
        self.deficit = 0  # how many more low bits of y the logic looks at than K (for a restart)

    # ---- the frontier: polynomial sources as affine functions of y -----------------------------
    def _affine_of(self, p: Poly, source) -> tuple[int, int, int | None]:
        """(alpha, beta, delay) with ``p == alpha * y@delay + beta``, else Unsupported."""
        if p.is_const:
            return 0, p.constant, None
        m0 = next(m for m in p.terms if m)
        delay = self.sym.table.vars[m0[0]].delay
        if self._ref is None:
            raise Unsupported(f"{self.sym.label(source)} varies but the output is constant")
        yd = self.y.delayed(delay, self.sym.table)
        ratios = Counter(p.terms.get(m, 0) // c for m, c in yd.terms.items() if m and p.terms.get(m, 0) % c == 0)
        alpha = ratios.most_common(1)[0][0] if ratios else 0
        beta = p.constant
        want = yd.scale(alpha).add_const(beta)
        if want != p:
            diff = p - want
            m = min(diff.terms, key=lambda mm: (len(mm), mm))
            raise NotAffine(self.sym.label(source), p, alpha, m, p.terms.get(m, 0), want.terms.get(m, 0),
                            p.text(self.sym.table))
        return alpha, beta, delay

    def _relaxed_affine(self, p: Poly, source) -> None:
        """A value of bit fields (walked through here, cell by cell) whose fields, taken as exact divisions,
        are not a rational multiple of y plus a constant cannot be a rounding of y: NotAffine, naming
        the monomial (a partial product of a split multiplier shifted, sliced or registered wrongly)."""
        r = self.sym.fields.relaxed(p)
        m0 = next((m for m in r.terms if m), None)
        if m0 is None or self._ref is None:
            return
        yd = self.y.delayed(self.sym.table.vars[m0[0]].delay, self.sym.table)
        ref = next(m for m in yd.terms if m)
        alpha = Fraction(r.terms.get(ref, 0), yd.terms[ref])
        want = yd.scale(alpha).add_const(r.constant)
        if want != r:
            diff = r - want
            m = min(diff.terms, key=lambda mm: (len(mm), mm))
            raise NotAffine(self.sym.label(source) + " (its bit fields taken as exact divisions)", r, alpha, m,
                            r.terms.get(m, 0), want.terms.get(m, 0), r.text(self.sym.table))

    def source(self, src) -> tuple[Aff, int]:
        """The source's bits [0, kbits) are the bits of the integer Aff(t, r) on the current region."""
        if src in self.memo:
            return self.memo[src]
        v = self.sym.value(src)
        w = self.sym.width(src)
        if not v.opaque and not self.sym.fields.has_atoms(v.poly):  # a value of bit fields: its cell
            if src not in self._frontier:
                k = w if v.known is None else min(v.known, w)
                p = v.poly.compact(k)  # only bits [0, k) are read: small coefficients suffice
                self._frontier[src] = (self._affine_of(p, src), k)
            (alpha, beta, delay), k = self._frontier[src]
            res = (self._norm(Aff(alpha << self.K, alpha, beta, delay)), k)
        else:
            if not v.opaque and v.known is None:
                self._relaxed_affine(v.poly, src)
            cell = self.n.cells[src[1]]
            res = (self._norm(self.cell(cell, src[2])), w)
        self.memo[src] = res
        return res

    # ---- affine helpers ----------------------------------------------------------------------------
    def _norm(self, v: Aff) -> Aff:
        R = self.R
        a, c, b = v.a, v.c, v.b
        if R.t0 == R.t1:
            b, a = b + a * R.t0, 0
        if R.r0 == R.r1:
            b, c = b + c * R.r0, 0
        return Aff(a, c, b, v.delay)

    def _range(self, v: Aff) -> tuple[int, int]:
        vals = [v.at(t, r) for t, r in self.R.corners()]
        return min(vals), max(vals)

    def _split_at(self, v: Aff, thr: int):
        """Split the region where v crosses ``v >= thr`` (v is not constant there)."""
        R = self.R
        v = self._norm(v)
        if v.c == 0 and v.a:
            # v >= thr  <=>  t >= ceil((thr - b) / a)  (a > 0)  or  t <= floor((b - thr) / -a)  (a < 0)
            if v.a > 0:
                ts = ceil_div(thr - v.b, v.a)
                cut = ts - 1
            else:
                cut = (v.b - thr) // (-v.a)
            if R.t0 <= cut < R.t1:
                raise Split([Region(R.t0, cut, R.r0, R.r1), Region(cut + 1, R.t1, R.r0, R.r1)])
        elif v.a == 0 and v.c:
            if v.c > 0:
                cut = ceil_div(thr - v.b, v.c) - 1
            else:
                cut = (v.b - thr) // (-v.c)
            if R.r0 <= cut < R.r1:
                raise Split([Region(R.t0, R.t1, R.r0, cut), Region(R.t0, R.t1, cut + 1, R.r1)])
        raise Split(R.halves())

    def _constant(self, v: Aff) -> int:
        v = self._norm(v)
        if v.a == 0 and v.c == 0:
            return v.b
        raise Split(self.R.halves())

    def floor_div(self, v: Aff, k: int) -> Aff:
        """floor(v / 2^k) as an affine function on the region (splitting where it is not)."""
        if k == 0:
            return v
        v = self._norm(v)
        m = 1 << k
        if v.a % m == 0 and v.c % m == 0:
            return Aff(v.a // m, v.c // m, v.b // m, v.delay)
        if v.a % m == 0:
            R = self.R
            q0, q1 = (v.c * R.r0 + v.b) // m, (v.c * R.r1 + v.b) // m
            if q0 == q1:
                return Aff(v.a // m, 0, q0, v.delay)
            nxt = min(q0, q1) + 1  # the first multiple crossed, going up
            self._split_at(Aff(0, v.c, v.b), nxt * m)
        a2 = (v.a & -v.a).bit_length() - 1  # 2-adic valuation of the t coefficient
        self.deficit = max(self.deficit, k - a2)
        raise Split(self.R.halves())

    def wrap(self, v: Aff, n: int, signed: bool) -> Aff:
        """The value of the low n bits of v, as a signed or unsigned integer."""
        lo = -(1 << (n - 1)) if signed else 0
        a, b = self._range(v)
        if lo <= a and b < lo + (1 << n):
            return v
        k = self.floor_div(Aff(v.a, v.c, v.b - lo, v.delay), n)
        return v.plus(Aff(-k.a << n, -k.c << n, -k.b << n, None))

    # ---- operands ----------------------------------------------------------------------------------
    def operand(self, bits, mode: str) -> Aff:
        """``mode``: "signed", "unsigned" or "raw" (any integer whose low len(bits) bits are these)."""
        n = len(bits)
        total = Aff(0, 0, 0, None)
        for f in segment(self.n, bits):
            top = f.offset + f.length + f.repeats == n
            if f.source is None:
                if f.constant not in ("0", "1"):
                    raise UndefinedBits()
                bit = int(f.constant)
                c = -bit << f.offset if (mode == "signed" and f.offset == n - 1) else bit << f.offset
                total = total.plus(Aff(0, 0, c))
                continue
            v, kbits = self.source(f.source)
            if f.start + f.length > kbits:
                raise Unsupported(f"bits of {self.sym.label(f.source)} above its known {kbits} are read")
            u = self.floor_div(v, f.start)
            if top and mode == "raw":  # any integer with these low bits: a sign-extended field is its signed value
                val = self.wrap(u, f.length, True) if f.repeats else u
            elif top and mode == "signed":
                val = self.wrap(u, f.length, True)
            elif f.repeats:
                val = self.wrap(self.wrap(u, f.length, True), f.length + f.repeats, False)
            else:
                val = self.wrap(u, f.length, False)
            total = total.plus(val.scale(1 << f.offset))
        return self._norm(total)

    def _boolean(self, bits) -> Aff:
        """Whether an operand is non-zero, constant on the region (else the region splits)."""
        v = self.operand(bits, "unsigned")
        lo, hi = self._range(v)
        if lo > 0:
            return Aff(0, 0, 1, v.delay)
        if hi == 0:
            return Aff(0, 0, 0, v.delay)
        self._split_at(v, 1)
        raise AssertionError("unreachable")

    def _const(self, v: Aff) -> Aff:
        return Aff(0, 0, self._constant(v), v.delay)

    # ---- cells ---------------------------------------------------------------------------------------
    def cell(self, c, port: str) -> Aff:
        """The cell's output as an affine function on the region (splitting it where the cell is not)."""
        method = _CELL_MODELS.get(c.type)
        if method is None:
            raise Unsupported(f"{c.label}: cell type {c.type} is not modelled in the output logic")
        return method(self, c)

    def _arith(self, c) -> Aff:
        """$add, $sub, and $mul by a value constant on the region."""
        both = _both(c)
        A, B = self.operand(c.ports["A"], both), self.operand(c.ports["B"], both)
        if c.type != "$mul":
            return A.plus(B.scale(1 if c.type == "$add" else -1))
        if A.a == A.c == 0:
            return Aff(B.a * A.b, B.c * A.b, B.b * A.b, joint_delay(A.delay, B.delay))
        if B.a == B.c == 0:
            return Aff(A.a * B.b, A.c * B.b, A.b * B.b, joint_delay(A.delay, B.delay))
        raise Split(self.R.halves())

    def _unary(self, c) -> Aff:
        """$neg, $pos, $not."""
        A = self.operand(c.ports["A"], "signed" if c.p("A_SIGNED") else "unsigned")
        if c.type == "$neg":
            return A.scale(-1)
        if c.type == "$not":
            return A.scale(-1).plus(Aff(0, 0, -1))
        return A

    def _shift(self, c) -> Aff:
        """Shifts by a constant amount."""
        kb = self.operand(c.ports["B"], "unsigned")
        if kb.delay is not None:
            raise Unsupported(f"{c.label}: a shift by a variable amount")
        k = self._constant(kb)
        sa = bool(c.p("A_SIGNED"))
        A = self.operand(c.ports["A"], "signed" if sa else "unsigned")
        if c.type in ("$shl", "$sshl"):
            return A.scale(1 << k)
        if c.type == "$shr" and sa:
            A = self.wrap(A, max(len(c.ports["A"]), c.p("Y_WIDTH", c.p("WIDTH"))), False)
        return self.floor_div(A, k)

    def _compare(self, c) -> Aff:
        """Comparisons: constant on the region, else the region splits where the difference crosses 0 or 1."""
        t, both = c.type, _both(c)
        A, B = self.operand(c.ports["A"], both), self.operand(c.ports["B"], both)
        d = A.plus(B.scale(-1))
        lo, hi = self._range(d)
        delay = d.delay
        if t in ("$lt", "$ge"):  # d < 0
            if hi < 0 or lo >= 0:
                res = int(hi < 0)
                return Aff(0, 0, res if t == "$lt" else 1 - res, delay)
            self._split_at(d, 0)
        if t in ("$le", "$gt"):  # d <= 0
            if hi <= 0 or lo > 0:
                res = int(hi <= 0)
                return Aff(0, 0, res if t == "$le" else 1 - res, delay)
            self._split_at(d, 1)
        # equality
        if lo == hi == 0 or lo > 0 or hi < 0:
            res = int(lo == hi == 0)
            return Aff(0, 0, res if t in ("$eq", "$eqx") else 1 - res, delay)
        if lo < 0:
            self._split_at(d, 0)
        self._split_at(d, 1)
        raise AssertionError("unreachable")

    def _mux(self, c) -> Aff:
        s = self._boolean(c.ports["S"])
        v = self.operand(c.ports["B" if s.b else "A"], "raw")
        return Aff(v.a, v.c, v.b, joint_delay(v.delay, s.delay))

    def _pmux(self, c) -> Aff:
        w = c.p("WIDTH")
        sel = [self._boolean(c.ports["S"][i:i + 1]) for i in range(c.p("S_WIDTH"))]
        on = [i for i, s in enumerate(sel) if s.b]
        if len(on) > 1:
            raise UndefinedBits()
        v = self.operand(c.ports["A"] if not on else c.ports["B"][on[0] * w:(on[0] + 1) * w], "raw")
        delay = v.delay
        for s in sel:
            delay = joint_delay(delay, s.delay)
        return Aff(v.a, v.c, v.b, delay)

    def _register(self, c) -> Aff:
        if c.type == "$sdff":
            raise Unsupported(f"{c.label}: a register with a reset inside the output logic")
        D = self.operand(c.ports["D"], "raw")
        return Aff(D.a, D.c, D.b, None if D.delay is None else D.delay + 1)

    def _bitwise(self, c) -> Aff:
        """$and, $or, $xor, $xnor of values constant on the region."""
        yw, both = c.p("Y_WIDTH", c.p("WIDTH")), _both(c)
        if yw == 1:
            A, B = self._boolean(c.ports["A"][:1]), self._boolean(c.ports["B"][:1])
        else:
            A, B = self._const(self.operand(c.ports["A"], both)), self._const(self.operand(c.ports["B"], both))
        a, b = A.b, B.b
        r = {"$and": a & b, "$or": a | b, "$xor": a ^ b, "$xnor": ~(a ^ b)}[c.type]
        return Aff(0, 0, r & ((1 << yw) - 1), joint_delay(A.delay, B.delay))

    def _logic(self, c) -> Aff:
        """$logic_not, $reduce_or, $reduce_bool, $logic_and, $logic_or: of operands non-zero or not."""
        t = c.type
        A = self._boolean(c.ports["A"])
        if t in ("$logic_not", "$reduce_or", "$reduce_bool"):
            return Aff(0, 0, 1 - A.b if t == "$logic_not" else A.b, A.delay)
        B = self._boolean(c.ports["B"])
        r = (A.b and B.b) if t == "$logic_and" else (A.b or B.b)
        return Aff(0, 0, int(r), joint_delay(A.delay, B.delay))

    def _reduce(self, c) -> Aff:
        """$reduce_and, $reduce_xor, $reduce_xnor of a value constant on the region."""
        n = len(c.ports["A"])
        A = self._const(self.operand(c.ports["A"], "unsigned"))
        a = A.b
        r = {"$reduce_and": int(a == (1 << n) - 1), "$reduce_xor": bin(a).count("1") & 1,
             "$reduce_xnor": 1 - (bin(a).count("1") & 1)}[c.type]
        return Aff(0, 0, r, A.delay)

    # ---- the declared quantisation on a region ------------------------------------------------------
    def spec_pieces(self, R: Region, shift: int, rounding: str, width: int | None, delay: int):
        """[(sub-region, Aff)] covering R, the declared output on each."""
        K = self.K
        if width is None:
            return [(R, Aff(1 << K, 1, 0, delay))]
        step = 1 << (K - shift)
        lo_q, hi_q = -(1 << (width - 1)), (1 << (width - 1)) - 1
        pieces = []
        r = R.r0
        while r <= R.r1:
            rho = round_shift(r, shift, rounding)
            a, b = r, R.r1
            while a < b:
                mid = (a + b + 1) // 2
                if round_shift(mid, shift, rounding) == rho:
                    a = mid
                else:
                    b = mid - 1
            ta, tb = ceil_div(lo_q - rho, step), (hi_q - rho) // step
            for t0, t1, val in ((R.t0, min(R.t1, ta - 1), Aff(0, 0, lo_q)),
                                (max(R.t0, ta), min(R.t1, tb), Aff(step, 0, rho, delay)),
                                (max(R.t0, tb + 1), R.t1, Aff(0, 0, hi_q))):
                if t0 <= t1:
                    pieces.append((Region(t0, t1, r, a), val))
            r = a + 1
        return pieces

    # ---- the check -----------------------------------------------------------------------------------
    def check(self, bits, y_lo: int, y_hi: int, shift: int, rounding: str, width: int | None,
              delay: int, max_mismatches: int = 16) -> ConeResult:
        """The case analysis; when the logic reads bits of y above 2^K (so that pieces multiply),
        it restarts with a larger K (any K >= shift + 1 is valid), at most twice."""
        total, restarts = 0, 0
        while True:
            self.deficit = 0
            small = restarts < 2 and self.max_regions > 2000
            res = self._check(bits, y_lo, y_hi, shift, rounding, width, delay, max_mismatches,
                              2000 if small else self.max_regions)
            total += res.regions
            if res.ok is not None or not small:
                break
            if self.deficit:  # the logic reads more low bits of y than K: decompose at a larger K
                self.K += self.deficit
                restarts += 1
            else:  # nothing to change: the full budget at once
                restarts = 2
        res.regions = total
        return res

    def _check(self, bits, y_lo, y_hi, shift, rounding, width, delay, max_mismatches, budget) -> ConeResult:
        K = self.K
        if width is not None and K < shift + 1:
            raise ValueError("K must be at least shift + 1")
        tl, rl = divmod(y_lo, 1 << K)
        th, rh = divmod(y_hi, 1 << K)
        full = (1 << K) - 1
        if tl == th:
            stack = [Region(tl, tl, rl, rh)]
        else:
            stack = [Region(tl, tl, rl, full), Region(th, th, 0, rh)]
            if th - tl >= 2:
                stack.append(Region(tl + 1, th - 1, 0, full))
        result = ConeResult(True)
        while stack:
            R = stack.pop()
            result.regions += 1
            if result.regions > budget:
                return ConeResult(None, result.regions, result.mismatches,
                                  f"the case analysis needed more than {budget} pieces")
            self.R, self.memo = R, {}
            try:
                impl = self.operand(bits, "signed")
            except Split as s:
                stack.extend(s.parts)
                continue
            except UndefinedBits:
                if R.t0 == R.t1 and R.r0 == R.r1:
                    y = (R.t0 << K) + R.r0
                    result.ok, result.undefined = False, True
                    result.mismatches.append((y, None, quantise_reference(y, shift, rounding, width)))
                    if len(result.mismatches) >= max_mismatches:
                        return result
                    continue
                stack.extend(R.halves())
                continue
            if impl.delay is not None and impl.delay != delay:
                result.ok, result.delay = False, impl.delay
                result.reason = f"the output follows the inputs of cycle t-{impl.delay}, not t-{delay}"
                return result
            for P, spec in self.spec_pieces(R, shift, rounding, width, delay):
                if any(impl.at(t, r) != spec.at(t, r) for t, r in P.corners()):
                    # both sides are affine on P, so they differ almost everywhere on it: report the
                    # differing points of smallest |y| (inputs realise a y near 0 most easily)
                    result.ok = False
                    found = sorted({((t << K) + r, impl.at(t, r), spec.at(t, r)) for t, r in probe_points(P)
                                    if impl.at(t, r) != spec.at(t, r)}, key=lambda m: (abs(m[0]), m[0]))
                    result.mismatches.extend(found[:2])
                if len(result.mismatches) >= max_mismatches:
                    return result
        return result


def _both(c) -> str:
    """How a two-operand cell reads its operands: signed when both are."""
    return "signed" if c.p("A_SIGNED") and c.p("B_SIGNED") else "unsigned"


_CELL_MODELS = {t: method for types, method in (
    (("$add", "$sub", "$mul"), ConeChecker._arith),
    (("$neg", "$pos", "$not"), ConeChecker._unary),
    (("$shl", "$sshl", "$shr", "$sshr"), ConeChecker._shift),
    (("$lt", "$le", "$gt", "$ge", "$eq", "$ne", "$eqx", "$nex"), ConeChecker._compare),
    (("$mux",), ConeChecker._mux),
    (("$pmux",), ConeChecker._pmux),
    (("$dff", "$sdff"), ConeChecker._register),
    (("$and", "$or", "$xor", "$xnor"), ConeChecker._bitwise),
    (("$logic_not", "$reduce_or", "$reduce_bool", "$logic_and", "$logic_or"), ConeChecker._logic),
    (("$reduce_and", "$reduce_xor", "$reduce_xnor"), ConeChecker._reduce),
) for t in types}
