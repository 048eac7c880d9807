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
coefficients, which is exact once its own range provably fits. The bits ``[a, a+n)`` of a
value that is not a multiple of 2^a, and the low bits of a wider value that do not hold all
of it (the chunks of a split multiplier's operand, a bit selecting a masked copy), are read
exactly as bit-field variables (:mod:`.fields`), which cancel where the chunks are summed
back. Anything else that is not a polynomial (a comparison, a multiplexer on a comparison)
is *opaque* here and left to :mod:`.rounding`, which also walks back through the cells of a
value made of bit fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .fields import Fields
from .netlist import Cell, Netlist, Unsupported, segment
from .polynomial import Poly, VarTable
from .ranges import Ranges
from .values import Loss, Operand, Reading, Value, add_bounds, min_known, mul_bounds, span


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
    fields: Fields | None = None  # bit fields read of values (made here when not given)

    def __post_init__(self):
        if self.fields is None:
            self.fields = Fields(self.table, self.ranges)

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
                self.values[("cell", name, port)] = self._settle(v)

    def _settle(self, v: Value) -> Value:
        """A value that reads bit fields, kept as a polynomial of the inputs once its fields cancel (the
        chunks of a split operand summed back); else as it is (its fields bound its range)."""
        if v.opaque or not self.fields.has_atoms(v.poly):
            return v
        n = self.fields.normalise(v.poly)
        if v.known is not None:
            n = n.compact(v.known)  # a floor times a multiple of 2^known is no bit of the value
        if self.fields.has_atoms(n):
            return v
        return Value(n, v.known, v.bound, v.losses)

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
        r = Reading()
        for f in segment(self.netlist, bits):
            if required is not None and f.offset >= required:
                break  # bits the cell does not use
            if f.source is None:
                r.constant(f, signed and f.offset == n - 1)
                continue
            if r.known is not None:
                break  # the bits above a lost or undetermined field are not known (nor needed)
            top_signed = signed and f.offset + f.length + f.repeats == n
            opaque = self._read_field(r, f, top_signed, required, reader)
            if opaque:
                return Operand(None, opaque=opaque)
        return r.operand(required)

    def _read_field(self, r: "Reading", f, top_signed: bool, required: int | None, reader: str) -> str:
        """Add the field ``f`` of a source to ``r``; returns why the operand is opaque ("" when it is not)."""
        v = self.value(f.source)
        if v.opaque:
            return v.opaque
        r.losses |= v.losses
        w = self.width(f.source)
        kv = w if v.known is None else min(v.known, w)
        a = f.start
        if a >= kv:
            r.known = min_known(r.known, f.offset)
            return ""
        p, pb = v.poly, v.bound
        if a and not p.divisible(a):
            self._field_atom(r, f, v.poly, kv, top_signed, required)
            return ""
        if a:
            p = p.div_pow2(a)
            pb = None if pb is None else (pb[0] >> a, pb[1] >> a)
        end = f.offset + f.length
        if f.length > kv - a:  # the field runs into bits that are not known
            r.modulo(p, f.offset, f.offset + kv - a)
        elif required is not None and end >= required:
            blo, bhi = self.ranges.bound(p)
            if _chunk(a, f.length, w) and not -(1 << (f.length - 1)) <= blo <= bhi < 1 << f.length:
                self._field_atom(r, f, v.poly, kv, top_signed, required)  # a chunk: its bits exactly
            else:
                r.modulo(p, f.offset, end)  # the bits needed are all known: no obligation
        else:
            chunk = _chunk(a, f.length, w)
            if not self._fit_field(r, f, p, pb, top_signed, required is not None and end + f.repeats >= required,
                                   reader, chunk):
                self._field_atom(r, f, v.poly, kv, top_signed, required)  # its bits exactly
        return ""

    def _field_atom(self, r: "Reading", f, P: Poly, kv: int, top_signed: bool, required: int | None) -> None:
        """The field ``f`` of a source whose value is ``P`` (bits below ``kv`` known), as a bit-field
        variable (:mod:`.fields`): exact, whatever ``P`` is."""
        n = min(f.length, kv - f.start)
        end = f.offset + n
        window_top = required is not None and end + f.repeats >= required
        signed = n == f.length and bool(top_signed or f.repeats)
        modulo = n < f.length or (required is not None and end >= required)
        if modulo and not signed and f.start + n == self.width(f.source):
            signed = None  # the top bits of a value, of which only the bits matter here
        atom = self.fields.field(P, f.start, n, signed, self.label(f.source))
        if modulo:
            r.modulo(atom, f.offset, end)  # the bits above are unknown, or not needed
        elif not signed or top_signed or window_top:
            r.exact(atom, f.offset, self.ranges.bound(atom))
        else:
            r.modulo(atom, f.offset, end + f.repeats)  # copies of its sign bit, read unsigned

    def _fit_field(self, r: "Reading", f, p: Poly, pb, top_signed: bool, window_top: bool, reader: str,
                   chunk: bool = False) -> bool:
        """The last field the cell needs: exact when its value (or the lifted one) provably fits the field;
        its copies of the sign bit are bits of p when p fits the field signed, whatever the bits above
        (that the cell drops) are. Otherwise an unsigned ``chunk`` (low bits of a wider value) is left to
        the caller (False); anything else records a loss, and only the field's bits are known."""
        end = f.offset + f.length
        if top_signed or (window_top and f.repeats):
            lo, hi = -(1 << (f.length - 1)), (1 << (f.length - 1)) - 1
        elif f.repeats:
            lo, hi = 0, (1 << (f.length - 1)) - 1
        else:
            lo, hi = 0, (1 << f.length) - 1
        candidates = [(p, pb)]
        lifted = p.reduced(f.length)
        if lifted != p:
            candidates.append((lifted, None))
        fit = None
        for i, (cand, hint) in enumerate(candidates):
            fit = self.ranges.fits(cand, lo, hi, hint)
            if fit.ok:
                self.lifts += i
                r.exact(cand, f.offset, fit.enclosure)
                return True
        if chunk and lo == 0 and not f.repeats:
            return False
        if f.repeats and lo == 0:
            # not its unsigned value, but when p fits the field signed its sign copies are bits of p:
            # the low end + repeats bits are known (only a carry into the bits above is not)
            shi = (1 << (f.length - 1)) - 1
            for cand, hint in candidates:
                if self.ranges.fits(cand, -shi - 1, shi, hint).ok:
                    r.modulo(cand, f.offset, end + f.repeats)
                    return True
        bits_text = f"bits [{f.start}:{f.start + f.length}]" + (f" sign-extended by {f.repeats}" if f.repeats else "")
        self.losses.append(Loss(reader, self.label(f.source), bits_text, candidates[-1][0], lo, hi, fit))
        r.losses.add(len(self.losses) - 1)
        r.modulo(p, f.offset, end)
        return True

    # ---- cells -----------------------------------------------------------------------------------
    def eval_cell(self, c: Cell) -> dict[str, Value]:
        """The values of the cell's outputs: a polynomial for arithmetic, shifts by constants, multiplexers,
        registers and one-bit logic; a computed constant or opaque for the rest."""
        method = _CELL_MODELS.get(c.type)
        if method is not None:
            return method(self, c)
        raise Unsupported(f"{c.label}: cell type {c.type} is not modelled")

    def _arith(self, c: Cell) -> dict[str, Value]:
        """$add, $sub, $mul."""
        t, yw, lbl = c.type, _y_width(c), c.label
        both = bool(c.p("A_SIGNED")) and bool(c.p("B_SIGNED"))
        A, B = self.read(c.ports["A"], both, yw, lbl), self.read(c.ports["B"], both, yw, lbl)
        if A.opaque or B.opaque:
            return _result(A if A.opaque else B, yw)
        if t == "$add":
            p, b = A.poly + B.poly, add_bounds(A.bound, B.bound)
        elif t == "$sub":
            p, b = A.poly - B.poly, add_bounds(A.bound, span(B.bound, -1))
        else:
            p, b = A.poly.mul(B.poly, self.table), mul_bounds(A.bound, B.bound)
        return _result(Operand(p, min_known(A.known, B.known), b, A.losses | B.losses), yw)

    def _unary(self, c: Cell) -> dict[str, Value]:
        """$neg, $pos, $not."""
        t, yw = c.type, _y_width(c)
        A = self.read(c.ports["A"], bool(c.p("A_SIGNED")), yw, c.label)
        if A.opaque or t == "$pos":
            return _result(A, yw)
        if t == "$neg":
            return _result(Operand(-A.poly, A.known, span(A.bound, -1), A.losses), yw)
        b = None if A.bound is None else (-A.bound[1] - 1, -A.bound[0] - 1)
        return _result(Operand((-A.poly).add_const(-1), A.known, b, A.losses), yw)

    def _shift(self, c: Cell) -> dict[str, Value]:
        """$shl, $sshl, $shr, $sshr by a constant amount (anything else is opaque)."""
        t, yw, lbl, sa = c.type, _y_width(c), c.label, bool(c.p("A_SIGNED"))
        B = self.read(c.ports["B"], False, None, lbl)
        if B.opaque or not B.poly.is_const or B.known is not None:
            return _result(Operand(None, opaque=f"{lbl}: shift by a variable amount"), yw)
        k = B.poly.constant
        if t in ("$shl", "$sshl"):
            if k >= yw:
                return _result(Operand(Poly()), yw)
            A = self.read(c.ports["A"], sa, yw - k, lbl)
            if A.opaque:
                return _result(A, yw)
            return _result(Operand(A.poly.shl(k), None if A.known is None else A.known + k,
                                   span(A.bound, 1 << k), A.losses), yw)
        if t == "$shr" and sa and k + yw > max(len(c.ports["A"]), yw):
            return _result(Operand(None, opaque=f"{lbl}: logical shift of a signed value"), yw)
        A = self.read(c.ports["A"], sa, yw + k, lbl)
        if A.opaque:
            return _result(A, yw)
        if not A.poly.divisible(k):
            return _result(Operand(None, opaque=f"{lbl}: shift right of a value that is not a multiple of 2^{k}"), yw)
        kn = None if A.known is None else A.known - k
        if kn is not None and kn <= 0:
            return _result(Operand(Poly(), 0), yw)
        b = None if A.bound is None else (A.bound[0] >> k, A.bound[1] >> k)
        return _result(Operand(A.poly.div_pow2(k), kn, b, A.losses), yw)

    def _mux(self, c: Cell) -> dict[str, Value]:
        """$mux: the selected input when S is constant, else A (1 - S) + B S."""
        lbl, w = c.label, c.p("WIDTH")
        S = self.read(c.ports["S"], False, None, lbl)
        if S.opaque:
            return _result(S, _y_width(c))
        if S.known is not None:  # a select known only modulo 2 is no 0/1 polynomial
            return _result(Operand(None, opaque=f"{lbl}: select not determined"), _y_width(c))
        if S.poly.is_const:
            return _result(self.read(c.ports["B" if S.poly.constant else "A"], False, w, lbl), w)
        A, B = self.read(c.ports["A"], False, w, lbl), self.read(c.ports["B"], False, w, lbl)
        if A.opaque or B.opaque:
            return _result(A if A.opaque else B, w)
        p = A.poly.mul(S.poly.one_minus(self.table), self.table) + B.poly.mul(S.poly, self.table)
        return _result(Operand(p, min_known(A.known, B.known), None, A.losses | B.losses | S.losses), w)

    def _pmux(self, c: Cell) -> dict[str, Value]:
        """$pmux: the selected input when the selects are constant, else A + sum_i S_i (B_i - A) when the
        selects are provably exclusive."""
        lbl, w, n = c.label, c.p("WIDTH"), c.p("S_WIDTH")
        sel = [self.read(c.ports["S"][i:i + 1], False, None, lbl) for i in range(n)]
        if any(s.opaque for s in sel):
            return _result(next(s for s in sel if s.opaque), w)
        if all(s.poly.is_const for s in sel):
            on = [i for i, s in enumerate(sel) if s.poly.constant]
            if len(on) > 1:
                return _result(Operand(None, opaque=f"{lbl}: two selects active"), w)
            bits = c.ports["A"] if not on else c.ports["B"][on[0] * w:(on[0] + 1) * w]
            return _result(self.read(bits, False, w, lbl), w)
        total = Poly()
        for s in sel:
            total = total + s.poly
        if not self.ranges.fits(total, 0, 1).ok:
            return _result(Operand(None, opaque=f"{lbl}: selects not provably exclusive"), w)
        A = self.read(c.ports["A"], False, w, lbl)
        p, known, losses = A.poly, A.known, set(A.losses)
        for i, s in enumerate(sel):
            Bi = self.read(c.ports["B"][i * w:(i + 1) * w], False, w, lbl)
            if A.opaque or Bi.opaque:
                return _result(A if A.opaque else Bi, w)
            p = p + s.poly.mul(Bi.poly - A.poly, self.table)
            known = min_known(known, Bi.known)
            losses |= Bi.losses | s.losses
        return _result(Operand(p, known, None, frozenset(losses)), w)

    def _register(self, c: Cell) -> dict[str, Value]:
        """$dff, $sdff on the rising edge of clk: D one cycle later (the synchronous reset as a multiplexer)."""
        lbl, w = c.label, c.p("WIDTH")
        clk = c.ports["CLK"]
        if len(clk) != 1 or clk[0] != self.clock or not c.p("CLK_POLARITY", 1):
            raise Unsupported(f"{lbl}: not clocked by the rising edge of clk")
        D = self.read(c.ports["D"], False, w, lbl)
        if D.opaque:
            return _result(D, w, "Q")
        p = D.poly
        if c.type == "$sdff":
            S = self.read(c.ports["SRST"], False, None, lbl)
            if S.opaque:
                return _result(S, w, "Q")
            s = S.poly if c.p("SRST_POLARITY", 1) else S.poly.one_minus(self.table)
            p = p.mul(s.one_minus(self.table), self.table) + s.scale(_signed_value(c.p("SRST_VALUE"), w))
        return _result(Operand(p.delayed(1, self.table), D.known, D.bound if c.type == "$dff" else None, D.losses),
                       w, "Q")

    def _bitwise(self, c: Cell) -> dict[str, Value]:
        """$and, $or, $xor, $xnor of one bit, as polynomials of 0/1 values; wider ones only when constant."""
        t, yw = c.type, _y_width(c)
        if yw != 1:
            return self._constant_cell(c)
        A = self.read(c.ports["A"][:1], False, None, c.label)
        B = self.read(c.ports["B"][:1], False, None, c.label)
        if A.opaque or B.opaque:
            return _result(A if A.opaque else B, yw)
        a, b = A.poly, B.poly
        ab = a.mul(b, self.table)
        p = {"$and": ab, "$or": a + b - ab, "$xor": a + b - ab.scale(2),
             "$xnor": (a + b - ab.scale(2)).one_minus(self.table)}[t]
        return _result(Operand(p, None, (0, 1), A.losses | B.losses), yw)

    def _reduce(self, c: Cell) -> dict[str, Value]:
        """$logic_not and the reductions of one bit; wider ones only when constant."""
        if len(c.ports["A"]) != 1:
            return self._constant_cell(c)
        A = self.read(c.ports["A"], False, None, c.label)
        if A.opaque:
            return _result(A, _y_width(c))
        p = A.poly.one_minus(self.table) if c.type in ("$logic_not", "$reduce_xnor") else A.poly
        return _result(Operand(p, None, (0, 1), A.losses), _y_width(c))

    def _logic(self, c: Cell) -> dict[str, Value]:
        """$logic_and, $logic_or of one-bit operands; wider ones only when constant."""
        if len(c.ports["A"]) != 1 or len(c.ports["B"]) != 1:
            return self._constant_cell(c)
        A = self.read(c.ports["A"], False, None, c.label)
        B = self.read(c.ports["B"], False, None, c.label)
        if A.opaque or B.opaque:
            return _result(A if A.opaque else B, _y_width(c))
        ab = A.poly.mul(B.poly, self.table)
        p = ab if c.type == "$logic_and" else (A.poly.one_minus(self.table)).mul(
            B.poly.one_minus(self.table), self.table).one_minus(self.table)
        return _result(Operand(p, None, (0, 1), A.losses | B.losses), _y_width(c))

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


_CELL_MODELS = {t: method for types, method in (
    (("$add", "$sub", "$mul"), Symbolic._arith),
    (("$neg", "$pos", "$not"), Symbolic._unary),
    (("$shl", "$sshl", "$shr", "$sshr"), Symbolic._shift),
    (("$mux",), Symbolic._mux),
    (("$pmux",), Symbolic._pmux),
    (("$dff", "$sdff"), Symbolic._register),
    (("$and", "$or", "$xor", "$xnor"), Symbolic._bitwise),
    (("$logic_not", "$reduce_or", "$reduce_bool", "$reduce_and", "$reduce_xor", "$reduce_xnor"), Symbolic._reduce),
    (("$logic_and", "$logic_or"), Symbolic._logic),
    (("$lt", "$le", "$gt", "$ge", "$eq", "$ne", "$eqx", "$nex"), Symbolic._constant_cell),
) for t in types}


def _chunk(a: int, n: int, w: int) -> bool:
    """Bits [a, a+n) of a w-bit source are a chunk (of a split operand, a bit of a fabric product) to read
    exactly as a bit field; the low w-1 bits are a width truncation (a sum's carry dropped), whose lost
    top bit is an overflow to report."""
    return a + n <= w - 2


def _y_width(c: Cell):
    return c.p("Y_WIDTH", c.p("WIDTH"))


def _result(op: Operand, width, port: str = "Y") -> dict[str, Value]:
    """A cell output's value from its operand: only the low ``width`` bits when not all are known."""
    if op.opaque:
        return {port: Value(None, opaque=op.opaque)}
    if op.known is None:
        return {port: Value(op.poly, None, op.bound, op.losses)}
    k = op.known if op.known < width else None
    # only the low bits are meaningful: keep the representative with the smallest coefficients
    return {port: Value(op.poly.compact(min(op.known, width)), k, None, op.losses)}


def _signed_value(v: int, w: int) -> int:
    return v - (1 << w) if w and v >> (w - 1) & 1 else v
