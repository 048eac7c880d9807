"""``prove_design``: the Verilog of a design folder computes what the design declares, for every input.

The claim, for the Winograd tile or the direct baseline of a checked design folder: for
every input word in its declared range (d, and g or the host transform u = G_int g) and
every cycle t >= latency, each output word y[o](t) equals the convolution of the inputs of
cycle t - latency (from the geometry alone), quantised as declared (from docs/interfaces.md's
words), and out_valid(t) = in_valid(t - latency) unless rst was high in between.

Steps: Yosys reads the file on disk (:mod:`.netlist`); every source becomes a polynomial
with its range obligations decided over the whole box (:mod:`.symbolic`,
:mod:`.ranges`); each output polynomial is compared monomial by monomial with the
convolution's; logic that is not polynomial (rounding, saturation) is proven by exact
case analysis over the one integer it depends on (:mod:`.rounding`). A disagreement is
turned into concrete inputs, replayed on the netlist and in Icarus (:mod:`.counterexample`).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path

from winohdl.core.errors import WinohdlError

from .concrete import ConcreteInputs
from .counterexample import Setting, realise
from .netlist import Netlist, Unsupported, run_yosys, segment
from .polynomial import Poly, TooDeep, VarTable, monomial_text
from .ranges import Ranges
from .report import Failure, ProofReport, Verdict
from .rounding import ConeChecker, NotAffine
from .spec import convolution_taps
from .symbolic import Symbolic, Value


class ProofInputError(WinohdlError):
    """The Verilog does not have the interface the design declares (bad input)."""


def _number(c) -> int | str:
    """A coefficient for a report: an integer, or a fraction as text (bit fields taken as divisions)."""
    return int(c) if c == int(c) else str(c)


def _signed_box(w: int) -> tuple[int, int]:
    return -(1 << (w - 1)), (1 << (w - 1)) - 1


class _Proof(ConcreteInputs):
    def __init__(self, opened, target: str, work: Path, icarus: bool):
        self.t0 = time.perf_counter()
        self.opened, self.target, self.work, self.use_icarus = opened, target, Path(work), icarus
        design = opened.design
        self.design, self.core, self.opts, self.geo = design, design.core(target), design.options, design.geometry
        self.verilog = opened.path(self.core.verilog)
        self.failures: list[Failure] = []
        self.notes: list[str] = []
        self.monomials = 0
        self.pieces = 0
        self.undecided = False
        self.replays = 0
        self.shown: list = []

    # ---- set-up -----------------------------------------------------------------------------------
    def build(self) -> None:
        data = run_yosys(self.verilog, self.core.top, self.work)
        widths = {p.name: p.width for p in self.core.ports}
        self.net = Netlist(data, self.core.top, widths)
        want = {p.name: ("input" if p.direction.value == "in" else "output", p.bits) for p in self.core.ports}
        got = {p.name: (p.direction, len(p.bits)) for p in self.net.ports.values()}
        if want != got:
            diff = sorted(set(want.items()) ^ set(got.items()))
            raise ProofInputError(f"{self.verilog.name}: the ports of {self.core.top} do not match design.json "
                                  f"(first difference: {diff[0][0]} {diff[0][1]})")
        o, g = self.opts, self.geo
        self.L = self.core.latency
        self.table = VarTable()
        self.table.show_delay = self.L > 0
        self.ranges = Ranges(self.table)
        self.taps = convolution_taps(g.output, g.kernel, g.stride, g.dilation)
        dbox, gbox = _signed_box(o.data_width), _signed_box(o.kernel_width)
        self.dbox, self.gbox = dbox, gbox
        self.dvars = [self.table.var("d", i, 0, *dbox, g.n_d) for i in range(g.n_d)]
        self.gvars = [self.table.var("g", k, 0, *gbox, g.n_g) for k in range(g.n_g)]
        inputs: dict = {}
        for i, v in enumerate(self.dvars):
            inputs[("in", "d", i)] = Value(Poly.var(v), None, dbox)
        self.host = None
        if self.core.port("u") is not None:
            self.host = self.design.host_kernel_transform
            uw = self.core.port("u").width
            for r, row in enumerate(self.host):
                p = Poly.linear({self.gvars[k]: c for k, c in enumerate(row)})
                fit = self.ranges.fits(p, *_signed_box(uw))
                if not fit.ok:
                    kernel = [fit.witness.get(v, 0) for v in self.gvars] if fit.witness else None
                    self.failures.append(Failure(
                        f"u[{r}]", "interface",
                        f"the host transform u = G_int g does not fit the {uw}-bit port for every kernel"
                        + (f": g = {kernel} gives u[{r}] = {fit.value}" if kernel else " (undecided)")))
                rng = self.ranges.linear_range(p)
                inputs[("in", "u", r)] = Value(p, None, (rng.lo, rng.hi))
        else:
            for k, v in enumerate(self.gvars):
                inputs[("in", "g", k)] = Value(Poly.var(v), None, gbox)
        self.clock = None
        for name in ("rst", "in_valid"):
            if name in self.net.ports:
                v = self.table.var(name, 0, 0, 0, 1)
                inputs[("in", name, 0)] = Value(Poly.var(v), None, (0, 1))
        if "clk" in self.net.ports:
            self.clock = self.net.ports["clk"].bits[0]
        self.sym = Symbolic(self.net, self.table, self.ranges, inputs, self.clock)
        self.setting = Setting({p.name: (p.direction.value, p.elements, p.width) for p in self.core.ports},
                               self.L, self.taps, self.host, g.n_g, o.output_shift,
                               o.rounding.value, o.output_width)
        self.evaluator = None
        self.runs: dict = {}

    def claim(self) -> str:
        o, g = self.opts, self.geo
        when = f"every cycle t >= {self.L}, " if self.L else ""
        src = f"(t-{self.L})" if self.L else ""
        kernel = "g" if self.core.port("u") is None else "g (the host sends u = G_int g)"
        y = (f"conv(d{src}, g{src})" if o.output_width is None else
             f"saturate_{o.output_width}({o.rounding.value}(conv(d{src}, g{src}) / 2^{o.output_shift}))")
        text = (f"for all d in [{self.dbox[0]}, {self.dbox[1]}]^{g.n_d}, {kernel} in "
                f"[{self.gbox[0]}, {self.gbox[1]}]^{g.n_g}, {when}y(t) = {y}")
        if self.core.port("out_valid") is not None:
            text += f"; out_valid(t) = in_valid(t-{self.L}) and no rst in t-{self.L}..t-1"
        return text

    # ---- spec -------------------------------------------------------------------------------------
    def y_poly(self, o: int, delay: int = 0) -> Poly:
        t = {}
        for i, k in self.taps[o]:
            m = tuple(sorted((self.dvars[i], self.gvars[k])))
            t[m] = t.get(m, 0) + 1
        return Poly(t).delayed(delay, self.table)

    def valid_poly(self) -> Poly:
        iv = self.table.var("in_valid", 0, self.L, 0, 1)
        p = Poly.var(iv)
        for k in range(1, self.L + 1):
            rst = self.table.var("rst", 0, k, 0, 1)
            p = p.mul(Poly.var(rst).one_minus(self.table), self.table)
        return p

    # ---- the run ----------------------------------------------------------------------------------
    def run(self) -> ProofReport:
        roots = [b for p in self.net.ports.values() if p.direction == "output" for b in p.bits]
        try:
            self.sym.run(roots)
        except (Unsupported, TooDeep) as exc:
            self.notes.append(f"not modelled: {exc}")
            return self.report(Verdict.UNDECIDED)
        y = self.core.port("y")
        for o in range(y.elements):
            self.check_y(o, self.net.ports["y"].bits[o * y.width:(o + 1) * y.width])
        if "out_valid" in self.net.ports:
            self.check_valid()
        for f in self.failures:
            cx = f.counterexample
            if cx is not None and cx.confirmed and cx.icarus is not None and cx.icarus != cx.netlist:
                self.notes.append(f"{f.output}: Icarus gives {cx.icarus} where the Yosys netlist gives {cx.netlist}: "
                                  "the two read the Verilog differently (the proof is about Yosys' reading)")
        if any(f.confirmed for f in self.failures):
            verdict = Verdict.DISPROVEN
        elif self.failures or self.undecided:
            verdict = Verdict.UNDECIDED
            for ob in self.sym.fields.obligations:  # what a split operand's chunks were not shown to be
                self.notes.append(f"obligation not decided at {ob.cell}: {ob.text}")
        else:
            verdict = Verdict.PROVEN
        return self.report(verdict)

    def report(self, verdict: Verdict) -> ProofReport:
        stats = dict(self.ranges.stats)
        checks = stats.pop("checks", 0)
        return ProofReport(
            design=self.design.name, target=self.target, top=self.core.top, verilog=self.core.verilog,
            verdict=verdict, cells=self.sym.cells_evaluated if hasattr(self, "sym") else 0,
            monomials=self.monomials, range_checks=checks, wraps_undone=self.sym.lifts if hasattr(self, "sym") else 0,
            rounding_pieces=self.pieces, outputs=sum(p.elements for p in self.core.ports
                                                     if p.direction.value == "out"),
            latency=self.L, seconds=time.perf_counter() - self.t0, claim=self.claim(),
            edited=tuple(self.opened.edited), failures=tuple(self.failures), notes=tuple(self.notes),
            methods=stats)

    # ---- one output word ----------------------------------------------------------------------------
    def check_y(self, o: int, bits) -> None:
        name = f"y[{o}]"
        opts = self.opts
        spec = self.y_poly(o, self.L)
        op = self.sym.read(bits, True, None, f"output {name}")
        quantised = opts.output_width is not None
        identity = not quantised
        if quantised and opts.output_shift == 0:
            fit = self.ranges.fits(self.y_poly(o), *_signed_box(opts.output_width))
            identity = bool(fit.ok)
        if not op.opaque and self.sym.fields.has_atoms(op.poly):
            op = self.fields_settled(name, o, bits, op, spec, identity)
            if op is None:
                return
        if not op.opaque and op.known is None and identity:
            self.compare(name, op.poly, spec, None)
            return
        if not op.opaque and op.known is not None and not quantised:
            self.monomials += len(set(op.poly.terms) | set(spec.terms))
            delta = (op.poly - spec).reduced(op.known)
            if delta:
                self.coefficient_failure(name, delta, op.poly.reduced(op.known), spec.reduced(op.known), op.known)
                return
            self.overflow_failure(name, op)
            return
        self.check_cone(name, o, bits, op)

    def fields_settled(self, name: str, o: int, bits, op, spec: Poly, identity: bool):
        """An output that reads bit fields: the operand in the inputs alone when its fields cancel; else
        (None) a failure where the chunks, floors taken as exact divisions, still differ from the
        convolution (a partial product shifted, sliced or registered wrongly), or the case analysis."""
        fields = self.sym.fields
        poly = fields.normalise(op.poly)
        poly = poly if op.known is None else poly.compact(op.known)
        if not fields.has_atoms(poly):
            return dataclasses.replace(op, poly=poly)
        if identity and op.known is None:
            relaxed = fields.relaxed(poly)
            if relaxed != spec:
                self.monomials += len(set(relaxed.terms) | set(spec.terms))
                self.coefficient_failure(name, relaxed - spec, relaxed, spec, None,
                                         " (bit fields taken as exact divisions)")
                return None
        self.check_cone(name, o, bits, op)  # bits of a value that is not a polynomial: the case analysis
        return None

    def compare(self, name: str, got: Poly, want: Poly, modulus: int | None) -> None:
        self.monomials += len(set(got.terms) | set(want.terms))
        delta = got - want
        if delta:  # complements of Booleans (~rst = 1 - rst) may hide an equality: compare canonical forms
            canon = delta.canonical(self.table)
            if canon is not None:
                delta = canon
                got, want = got.canonical(self.table) or got, want.canonical(self.table) or want
        if modulus is not None:
            delta = delta.reduced(modulus)
        if delta:
            self.coefficient_failure(name, delta, got, want, modulus)

    def coefficient_failure(self, name: str, delta: Poly, got: Poly, want: Poly, modulus: int | None,
                            how: str = "") -> None:
        m = min(delta.terms, key=lambda mm: (len(mm), mm))
        x = {v: 1 for v in m}
        mono = monomial_text(m, self.table)
        c_got, c_want = _number(got.terms.get(m, 0)), _number(want.terms.get(m, 0))
        msg = (f"coefficient of {mono} is {c_got}, the convolution's is {c_want}{how}"
               + (f" (modulo 2^{modulus})" if modulus else ""))
        delays = sorted({self.table.vars[v].delay for v in m if self.table.vars[v].port in ("d", "g", "u")})
        if self.L and any(dl != self.L for dl in delays):
            msg += f": a path through {', '.join(map(str, delays))} registers where the latency is {self.L}"
        cx = self.confirm(name, x)
        if cx is None or not cx.confirmed:
            cx = self.search(name, extra=[x]) or cx
        cell = None
        if cx is None or not cx.confirmed:  # the obligation left open, and where: the logic driving the output
            msg = f"not shown: {name} equals the convolution monomial by monomial; {msg}; no input found that " \
                  "shows a difference on the netlist"
            cell = self.driver(self.output_bits(name))
        self.failures.append(Failure(name, "coefficient", msg, mono, c_want, c_got, modulus, cell, cx))

    def output_bits(self, name: str) -> list:
        if name.startswith("y["):
            o, w = int(name[2:-1]), self.core.port("y").width
            return self.net.ports["y"].bits[o * w:(o + 1) * w]
        return self.net.ports[name].bits

    def driver(self, bits) -> str | None:
        """The cell driving the first of ``bits`` that a cell drives (for a report)."""
        for f in segment(self.net, bits):
            if f.source is not None and f.source[0] == "cell":
                return self.sym.label(f.source)
        return None

    def overflow_failure(self, name: str, op) -> None:
        losses = [self.sym.losses[i] for i in sorted(op.losses)]
        witnesses = [ls.fit.witness for ls in losses if ls.fit.witness]
        cx = self.search(name, extra=witnesses)
        ls = next((ls for ls in losses if ls.fit.ok is False), losses[0] if losses else None)
        if ls is None:
            msg = f"only the low {op.known} bits are determined (an undefined bit?)"
            cell = None
        elif ls.fit.ok is False:
            msg = (f"{ls.source} reaches {ls.fit.value}, outside [{ls.lo}, {ls.hi}] where {ls.reader} reads "
                   f"its {ls.bits}: the bits above are lost")
            cell = ls.source
        else:
            msg = (f"could not decide whether {ls.source} stays in [{ls.lo}, {ls.hi}] where {ls.reader} reads "
                   f"its {ls.bits} ({ls.fit.method})")
            cell = ls.source
        kind = "overflow" if cx is not None and cx.confirmed else "undecided"
        if kind == "undecided":
            self.undecided = True
        self.failures.append(Failure(name, kind, msg, cell=cell, modulus_bits=op.known, counterexample=cx))

    def check_cone(self, name: str, o: int, bits, op) -> None:
        opts = self.opts
        shift = opts.output_shift if opts.output_width is not None else 0
        checker = ConeChecker(self.sym, self.y_poly(o), shift)
        rng = self.ranges.range(self.y_poly(o))
        lo, hi = (rng.lo, rng.hi) if rng is not None else self.ranges.bound(self.y_poly(o))
        try:
            res = checker.check(bits, lo, hi, shift, opts.rounding.value, opts.output_width, self.L)
        except NotAffine as exc:
            self.not_affine(name, o, exc)
            return
        except Unsupported as exc:
            res = None
            reason = str(exc)
        self.pieces += res.regions if res else 0
        if res is not None and res.ok:
            self.monomials += len(self.y_poly(o)) * max(1, len(checker._frontier))
            return
        if res is not None and res.ok is False:
            if res.delay is not None:
                cx = self.search(name, sequences=True)
                self.failures.append(Failure(name, "latency", res.reason, counterexample=cx))
                if cx is None or not cx.confirmed:
                    self.undecided = True
                return
            cx = None
            kind = "undefined" if res.undefined else "rounding"
            for y, got, want in sorted(res.mismatches, key=lambda m: (abs(m[0]), m[0])):
                found = realise(y, self.taps[o], self.dbox, self.gbox)
                if found is None:
                    continue
                d, g = found
                x = {self.table.var("d", i, self.L, *self.dbox, self.geo.n_d): v for i, v in d.items()}
                x.update({self.table.var("g", k, self.L, *self.gbox, self.geo.n_g): v for k, v in g.items()})
                cx = self.confirm(name, x)
                if cx is not None and cx.confirmed:
                    what = "undefined (x) bits" if got is None else str(got)
                    self.failures.append(Failure(
                        name, kind, f"for convolution value {y} the logic gives {what}, the declaration "
                                    f"{want} ({opts.rounding.value if opts.output_width else 'exact'})",
                        counterexample=cx))
                    return
            y0 = min(res.mismatches, key=lambda m: (abs(m[0]), m[0]))[0]
            found = self.search(name)  # no input realises those values: random and extreme inputs
            if found is not None and found.confirmed:
                mode = opts.rounding.value if opts.output_width else "exact"
                self.failures.append(Failure(
                    name, kind, f"the logic differs from the declaration ({mode}); the case analysis finds it "
                                f"at convolution value {y0} among others, and this input shows it",
                    counterexample=found))
                return
            self.undecided = True
            self.failures.append(Failure(name, "undecided", f"the logic differs from the declaration at "
                                         f"convolution value {y0}, which no input found here reaches",
                                         counterexample=cx))
            return
        why = res.reason if res is not None else reason
        delta = None if op.opaque else op.poly - self.y_poly(o, self.L)
        cx = self.search(name, delta=delta)
        if cx is not None and cx.confirmed:
            self.failures.append(Failure(name, "coefficient" if delta else "rounding",
                                         f"the output is not the declared function of the convolution ({why})",
                                         counterexample=cx))
            return
        self.undecided = True
        self.failures.append(Failure(name, "undecided", f"{why}; no counterexample found"))

    def not_affine(self, name: str, o: int, exc) -> None:
        """The value entering the output logic is not alpha * conv + beta: name the monomial that differs."""
        m = exc.monomial
        mono = monomial_text(m, self.table)
        delta = exc.poly - self.y_poly(o, self.table.vars[m[0]].delay if m else self.L).scale(exc.alpha)
        x = {v: 1 for v in m}
        cx = self.confirm(name, x)
        if cx is None or not cx.confirmed:
            cx = self.search(name, delta=delta) or cx
        got, want, alpha = _number(exc.got), _number(exc.want), _number(exc.alpha)
        msg = (f"{exc.source} feeds the output logic (division, rounding) with coefficient {got} for {mono}; "
               f"{alpha} x the convolution has {want}")
        self.failures.append(Failure(name, "coefficient", msg, mono, want, got, None, exc.source, cx))
        if cx is None or not cx.confirmed:
            self.undecided = True

    def check_valid(self) -> None:
        bits = self.net.ports["out_valid"].bits
        op = self.sym.read(bits, False, None, "output out_valid")
        if op.opaque or op.known is not None:
            cx = self.search("out_valid", sequences=True)
            if cx is not None and cx.confirmed:
                self.failures.append(Failure("out_valid", "latency", "out_valid is not a delayed in_valid",
                                             counterexample=cx))
            else:
                self.undecided = True
                self.failures.append(Failure("out_valid", "undecided", op.opaque or "out_valid not determined"))
            return
        self.compare("out_valid", op.poly, self.valid_poly(), None)

def prove_design(opened, target: str = "wino", work=None, icarus: bool = True) -> ProofReport:
    """Prove that the Verilog of ``opened`` (a checked design folder) computes what the design declares.

    Parameters
    ----------
    opened : hdl.design.OpenedDesign
        From ``open_design(folder, allow_edits=...)``; edited files are proven as they are.
    target : str
        ``"wino"`` (the tile) or ``"direct"`` (the baseline).
    work : path, optional
        A folder of this run's own for Yosys' netlist and the Icarus replay (a temporary one if None).
    icarus : bool
        Replay counterexamples in Icarus Verilog too (when it is installed).

    Returns
    -------
    ProofReport
        PROVEN, DISPROVEN (with a counterexample confirmed on the netlist) or UNDECIDED (with the reason).

    Raises
    ------
    WinohdlError
        Bad input: Verilog that Yosys cannot read, ports that differ from design.json, an unknown target.
    """
    if target not in ("wino", "direct"):
        raise WinohdlError(f"unknown proof target {target!r}: choose wino or direct")
    work = Path(work) if work is not None else Path(tempfile.mkdtemp(prefix="winohdl-prove-"))
    proof = _Proof(opened, target, work, icarus)
    proof.build()
    return proof.run()


__all__ = ["prove_design", "ProofInputError"]
