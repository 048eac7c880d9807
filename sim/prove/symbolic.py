"""Symbolic evaluation of a netlist: every source (an input word or a cell output) as a polynomial.

The model of a source of ``w`` bits is a :class:`Value`: a polynomial P over the input
variables such that, for every input in the box, the source's bits are the low bits of
P's two's complement expansion -- all ``w`` of them (``known`` is None), or only the low
``known`` bits (arithmetic that wrapped: the value is known modulo 2^known).

Cells read their operands through *fields*: a run of consecutive bits ``[a, a+n)`` of
one source, possibly followed by copies of its last bit (a sign extension), or constant
bits. A field is a polynomial exactly when the source's P is a multiple of 2^a (so
``floor(P / 2^a)`` is ``P / 2^a``) and the field's value provably fits its bits -- the
obligation "no bit is lost", decided by :mod:`.ranges` over the whole input box. When it
does not fit, the field still fixes the value modulo 2^n; such a wrap is harmless when it
is undone exactly later (the exact division's multiplication by an odd inverse modulo
2^w): the value read at the end is lifted to the representative with the smallest
coefficients, which is exact once its own range provably fits. Anything that is not a
polynomial (a floor of a value that is not a multiple, a comparison, a multiplexer on a
comparison) is *opaque* here and left to :mod:`.rounding`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .netlist import Cell, Netlist, Unsupported, segment
from .polynomial import Poly, VarTable
from .ranges import Fit, Ranges


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


def _span(lo_hi, k: int):
    return None if lo_hi is None else (lo_hi[0] * k, lo_hi[1] * k) if k >= 0 else (lo_hi[1] * k, lo_hi[0] * k)


def _add_bounds(a, b):
    return None if a is None or b is None else (a[0] + b[0], a[1] + b[1])


def _mul_bounds(a, b):
    if a is None or b is None:
        return None
    c = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return min(c), max(c)


def _min_known(*ks):
    ks = [k for k in ks if k is not None]
    return min(ks) if ks else None


@dataclass
class Symbolic:
    """The symbolic values of every source in the cone of some bits of a netlist."""

    netlist: Netlist
    table: VarTable
    ranges: Ranges
    inputs: dict  # ("in", port, element) -> Value
    clock: int | None = None  # the clk port's bit
    values: dict = field(default_factory=dict)
    losses: list = field(default_factory=list)
    cells_evaluated: int = 0
    lifts: int = 0  # wrapped values read back exactly (the wrap is undone)

    # ---- labels ---------------------------------------------------------------------------------
    def label(self, source: tuple) -> str:
        if source[0] == "in":
            words = len(self.netlist.ports[source[1]].bits) // self.netlist.word_widths[source[1]]
            return f"input {source[1]}[{source[2]}]" if words > 1 else f"input {source[1]}"
        return self.netlist.cells[source[1]].label

    # ---- evaluation -----------------------------------------------------------------------------
    def run(self, roots) -> None:
        for name in self.netlist.order(roots):
            cell = self.netlist.cells[name]
            self.cells_evaluated += 1
            for port, v in self.eval_cell(cell).items():
                self.values[("cell", name, port)] = v

    def value(self, source: tuple) -> Value:
        if source[0] == "in":
            if source not in self.inputs:
                raise Unsupported(f"{self.label(source)} is read by the logic (a clock used as data?)")
            return self.inputs[source]
        return self.values[source]

    def width(self, source: tuple) -> int:
        return self.netlist.source_width(source)

    # ---- fields ----------------------------------------------------------------------------------
    def read(self, bits, signed: bool, need: int | None, reader: str) -> Operand:
        """The operand ``bits`` interpreted as a (signed) integer; ``need`` low bits of it matter
        (None: all of them, i.e. its exact value)."""
        n = len(bits)
        required = None if need is None or need > n else need  # None: exact
        total, known, losses = Poly(), None, set()
        bound = (0, 0)
        for f in segment(self.netlist, bits):
            top = f.offset + f.length + f.repeats == n
            if required is not None and f.offset >= required:
                break  # bits the cell does not use
            if f.source is None:
                if f.constant in ("0", "1"):
                    bit = int(f.constant)
                    c = -bit << f.offset if (signed and f.offset == n - 1) else bit << f.offset
                    total = total.add_const(c)
                    bound = _add_bounds(bound, (c, c))
                else:
                    known = _min_known(known, f.offset)
                continue
            if known is not None:
                break  # the bits above a lost or undetermined field are not known (nor needed)
            v = self.value(f.source)
            if v.opaque:
                return Operand(None, opaque=v.opaque)
            losses |= v.losses
            w = self.width(f.source)
            kv = w if v.known is None else min(v.known, w)
            a = f.start
            if a >= kv:
                known = _min_known(known, f.offset)
                continue
            p, pb = v.poly, v.bound
            if a:
                if not p.divisible(a):
                    return Operand(None, opaque=f"bits from {a} up of {self.label(f.source)}, "
                                               f"not a multiple of 2^{a}")
                p = p.div_pow2(a)
                pb = None if pb is None else (pb[0] >> a, pb[1] >> a)
            kq = kv - a
            if f.length > kq:  # the field runs into bits that are not known
                total = total + p.shl(f.offset)
                known = _min_known(known, f.offset + kq)
                bound = None
                continue
            end = f.offset + f.length
            if required is not None and end >= required:
                total = total + p.shl(f.offset)  # the bits needed are all known: no obligation
                known = _min_known(known, end)
                bound = None
                continue
            # the last field the cell needs: its copies of the sign bit are bits of p when p fits
            # the field signed, whatever the bits above (that the cell drops) are
            window_top = required is not None and end + f.repeats >= required
            if (top and signed) or (window_top and f.repeats):
                lo, hi = -(1 << (f.length - 1)), (1 << (f.length - 1)) - 1
            elif f.repeats:
                lo, hi = 0, (1 << (f.length - 1)) - 1
            else:
                lo, hi = 0, (1 << f.length) - 1
            candidates = [(p, pb)]
            lifted = p.reduced(f.length)
            if lifted != p:
                candidates.append((lifted, None))
            fit, chosen = None, None
            for i, (cand, hint) in enumerate(candidates):
                fit = self.ranges.fits(cand, lo, hi, hint)
                if fit.ok:
                    chosen = cand
                    self.lifts += i
                    break
            if chosen is not None:
                total = total + chosen.shl(f.offset)
                bound = _add_bounds(bound, _span(fit.enclosure, 1 << f.offset))
                continue
            if f.repeats and lo == 0:
                # not its unsigned value, but when p fits the field signed its sign copies are bits of p:
                # the low end + repeats bits are known (only a carry into the bits above is not)
                shi = (1 << (f.length - 1)) - 1
                for cand, hint in candidates:
                    if self.ranges.fits(cand, -shi - 1, shi, hint).ok:
                        total = total + cand.shl(f.offset)
                        known = _min_known(known, end + f.repeats)
                        bound = None
                        break
                else:
                    cand = None
                if cand is not None:
                    continue
            bits_text = f"bits [{a}:{a + f.length}]" + (f" sign-extended by {f.repeats}" if f.repeats else "")
            self.losses.append(Loss(reader, self.label(f.source), bits_text, candidates[-1][0], lo, hi, fit))
            losses.add(len(self.losses) - 1)
            total = total + p.shl(f.offset)
            known = _min_known(known, end)
            bound = None
        if known is not None and required is not None and known >= required:
            known = required
        exact = known is None
        return Operand(total, known, bound if exact else None, frozenset(losses))

    # ---- cells -----------------------------------------------------------------------------------
    def eval_cell(self, c: Cell) -> dict[str, Value]:
        t = c.type
        yw = c.p("Y_WIDTH", c.p("WIDTH"))
        sa, sb = bool(c.p("A_SIGNED")), bool(c.p("B_SIGNED"))
        lbl = c.label

        def out(op: Operand, width=yw, port="Y") -> dict:
            if op.opaque:
                return {port: Value(None, opaque=op.opaque)}
            if op.known is None:
                return {port: Value(op.poly, None, op.bound, op.losses)}
            k = op.known if op.known < width else None
            # only the low bits are meaningful: keep the representative with the smallest coefficients
            return {port: Value(op.poly.compact(min(op.known, width)), k, None, op.losses)}

        if t in ("$add", "$sub", "$mul"):
            both = sa and sb
            A, B = self.read(c.ports["A"], both, yw, lbl), self.read(c.ports["B"], both, yw, lbl)
            if A.opaque or B.opaque:
                return out(A if A.opaque else B)
            if t == "$add":
                p, b = A.poly + B.poly, _add_bounds(A.bound, B.bound)
            elif t == "$sub":
                p, b = A.poly - B.poly, _add_bounds(A.bound, _span(B.bound, -1))
            else:
                p, b = A.poly.mul(B.poly, self.table), _mul_bounds(A.bound, B.bound)
            return out(Operand(p, _min_known(A.known, B.known), b, A.losses | B.losses))
        if t in ("$neg", "$pos", "$not"):
            A = self.read(c.ports["A"], sa, yw, lbl)
            if A.opaque:
                return out(A)
            if t == "$neg":
                return out(Operand(-A.poly, A.known, _span(A.bound, -1), A.losses))
            if t == "$not":
                b = None if A.bound is None else (-A.bound[1] - 1, -A.bound[0] - 1)
                return out(Operand((-A.poly).add_const(-1), A.known, b, A.losses))
            return out(A)
        if t in ("$shl", "$sshl", "$shr", "$sshr"):
            B = self.read(c.ports["B"], False, None, lbl)
            if B.opaque or not B.poly.is_const or B.known is not None:
                return out(Operand(None, opaque=f"{lbl}: shift by a variable amount"))
            k = B.poly.constant
            if t in ("$shl", "$sshl"):
                if k >= yw:
                    return out(Operand(Poly()))
                A = self.read(c.ports["A"], sa, yw - k, lbl)
                if A.opaque:
                    return out(A)
                return out(Operand(A.poly.shl(k), None if A.known is None else A.known + k,
                                   _span(A.bound, 1 << k), A.losses))
            n = max(len(c.ports["A"]), yw)
            if t == "$shr" and sa and k + yw > n:
                return out(Operand(None, opaque=f"{lbl}: logical shift of a signed value"))
            A = self.read(c.ports["A"], sa, yw + k, lbl)
            if A.opaque:
                return out(A)
            if not A.poly.divisible(k):
                return out(Operand(None, opaque=f"{lbl}: shift right of a value that is not a multiple of 2^{k}"))
            kn = None if A.known is None else A.known - k
            if kn is not None and kn <= 0:
                return out(Operand(Poly(), 0))
            b = None if A.bound is None else (A.bound[0] >> k, A.bound[1] >> k)
            return out(Operand(A.poly.div_pow2(k), kn, b, A.losses))
        if t == "$mux":
            S = self.read(c.ports["S"], False, None, lbl)
            if S.opaque:
                return out(S)
            w = c.p("WIDTH")
            if S.poly.is_const:
                return out(self.read(c.ports["B" if S.poly.constant else "A"], False, w, lbl), w)
            A, B = self.read(c.ports["A"], False, w, lbl), self.read(c.ports["B"], False, w, lbl)
            if A.opaque or B.opaque:
                return out(A if A.opaque else B, w)
            p = A.poly.mul(S.poly.one_minus(self.table), self.table) + B.poly.mul(S.poly, self.table)
            return out(Operand(p, _min_known(A.known, B.known), None, A.losses | B.losses | S.losses), w)
        if t == "$pmux":
            w, n = c.p("WIDTH"), c.p("S_WIDTH")
            sel = [self.read(c.ports["S"][i:i + 1], False, None, lbl) for i in range(n)]
            if any(s.opaque for s in sel):
                return out(next(s for s in sel if s.opaque), w)
            if all(s.poly.is_const for s in sel):
                on = [i for i, s in enumerate(sel) if s.poly.constant]
                if len(on) > 1:
                    return out(Operand(None, opaque=f"{lbl}: two selects active"), w)
                bits = c.ports["A"] if not on else c.ports["B"][on[0] * w:(on[0] + 1) * w]
                return out(self.read(bits, False, w, lbl), w)
            total = Poly()
            for s in sel:
                total = total + s.poly
            if not self.ranges.fits(total, 0, 1).ok:
                return out(Operand(None, opaque=f"{lbl}: selects not provably exclusive"), w)
            A = self.read(c.ports["A"], False, w, lbl)
            p, known, losses = A.poly, A.known, set(A.losses)
            for i, s in enumerate(sel):
                Bi = self.read(c.ports["B"][i * w:(i + 1) * w], False, w, lbl)
                if A.opaque or Bi.opaque:
                    return out(A if A.opaque else Bi, w)
                p = p + s.poly.mul(Bi.poly - A.poly, self.table)
                known = _min_known(known, Bi.known)
                losses |= Bi.losses | s.losses
            return out(Operand(p, known, None, frozenset(losses)), w)
        if t in ("$dff", "$sdff"):
            w = c.p("WIDTH")
            clk = c.ports["CLK"]
            if len(clk) != 1 or clk[0] != self.clock or not c.p("CLK_POLARITY", 1):
                raise Unsupported(f"{lbl}: not clocked by the rising edge of clk")
            D = self.read(c.ports["D"], False, w, lbl)
            if D.opaque:
                return out(D, w, "Q")
            p = D.poly
            if t == "$sdff":
                S = self.read(c.ports["SRST"], False, None, lbl)
                if S.opaque:
                    return out(S, w, "Q")
                s = S.poly if c.p("SRST_POLARITY", 1) else S.poly.one_minus(self.table)
                p = p.mul(s.one_minus(self.table), self.table) + s.scale(_signed_value(c.p("SRST_VALUE"), w))
            return out(Operand(p.delayed(1, self.table), D.known, D.bound if t == "$dff" else None, D.losses),
                       w, "Q")
        if t in ("$and", "$or", "$xor", "$xnor"):
            if yw == 1:
                A = self.read(c.ports["A"][:1], False, None, lbl)
                B = self.read(c.ports["B"][:1], False, None, lbl)
                if A.opaque or B.opaque:
                    return out(A if A.opaque else B)
                a, b = A.poly, B.poly
                ab = a.mul(b, self.table)
                p = {"$and": ab, "$or": a + b - ab, "$xor": a + b - ab.scale(2),
                     "$xnor": (a + b - ab.scale(2)).one_minus(self.table)}[t]
                return out(Operand(p, None, (0, 1), A.losses | B.losses))
            return self._constant_cell(c)
        if t in ("$logic_not", "$reduce_or", "$reduce_bool", "$reduce_and", "$reduce_xor", "$reduce_xnor"):
            if len(c.ports["A"]) == 1:
                A = self.read(c.ports["A"], False, None, lbl)
                if A.opaque:
                    return out(A)
                p = A.poly.one_minus(self.table) if t in ("$logic_not", "$reduce_xnor") else A.poly
                return out(Operand(p, None, (0, 1), A.losses))
            return self._constant_cell(c)
        if t in ("$logic_and", "$logic_or"):
            if len(c.ports["A"]) == 1 and len(c.ports["B"]) == 1:
                A = self.read(c.ports["A"], False, None, lbl)
                B = self.read(c.ports["B"], False, None, lbl)
                if A.opaque or B.opaque:
                    return out(A if A.opaque else B)
                ab = A.poly.mul(B.poly, self.table)
                p = ab if t == "$logic_and" else (A.poly.one_minus(self.table)).mul(
                    B.poly.one_minus(self.table), self.table).one_minus(self.table)
                return out(Operand(p, None, (0, 1), A.losses | B.losses))
            return self._constant_cell(c)
        if t in ("$lt", "$le", "$gt", "$ge", "$eq", "$ne", "$eqx", "$nex"):
            return self._constant_cell(c)
        raise Unsupported(f"{lbl}: cell type {t} is not modelled")

    def _constant_cell(self, c: Cell) -> dict[str, Value]:
        """A cell whose inputs are all constant is computed; otherwise its output is opaque."""
        from .netlist import cell_output
        ins = {}
        for k in self.netlist.inputs_of(c):
            op = self.read(c.ports[k], False, None, c.label)
            if op.opaque or not op.poly.is_const or op.known is not None:
                return {o: Value(None, opaque=f"{c.label}: {c.type} of values that vary") for o in c.outputs}
            ins[k] = (op.poly.constant & ((1 << len(c.ports[k])) - 1), len(c.ports[k]))
        res = cell_output(c, lambda port, lo=None, hi=None: (
            (ins[port][0] >> (lo or 0)) & ((1 << ((hi if hi is not None else ins[port][1]) - (lo or 0))) - 1),
            (hi if hi is not None else ins[port][1]) - (lo or 0)))
        return {k: Value(Poly.const(v), None, (v, v)) for k, v in res.items()}


def _signed_value(v: int, w: int) -> int:
    return v - (1 << w) if w and v >> (w - 1) & 1 else v
