"""Concrete inputs for :mod:`.core`: a candidate counterexample replayed on the netlist (and in Icarus),
and the search for one (the monomial points of a difference, range extremes, random sequences)."""

from __future__ import annotations

import random

from .counterexample import icarus_outputs, run_netlist
from .netlist import Evaluator, Unsupported
from .polynomial import Poly
from .report import Counterexample

SEARCH_CANDIDATES = 48
ICARUS_REPLAYS = 3  # counterexamples replayed in Icarus per proof (the first ones found)
INPUT_PORTS = ("d", "g", "u", "rst", "in_valid")


class ConcreteInputs:
    """The replay half of a proof (mixed into ``core._Proof``, whose set-up gives the attributes used:
    table, setting, net, geo, dbox, gbox, L, ranges, y_poly, verilog, core, work, use_icarus)."""

    evaluator: Evaluator | None = None
    replays: int = 0
    shown: list  # inputs that showed an output wrong (tried first for the next output); set by the proof

    def confirm(self, name: str, x: dict) -> Counterexample | None:
        """Replay an assignment on the netlist (and in Icarus when it disagrees with the declaration)."""
        x = {v: val for v, val in x.items()
             if self.table.vars[v].port.lstrip("~") in INPUT_PORTS}
        cycles = self.setting.cycles_from(x, self.table)
        key = tuple(tuple((p, tuple(v)) for p, v in sorted(c.items())) for c in self.setting.words(cycles))
        if key not in self.runs:  # one netlist run per input sequence, whichever output is being checked
            try:
                if self.evaluator is None:
                    self.evaluator = Evaluator(self.net)
                self.runs[key] = run_netlist(self.evaluator, self.setting, cycles)[0]
            except Unsupported:
                self.runs[key] = None
        outs = self.runs[key]
        if outs is None:
            return None
        want = self.setting.expected(cycles, name)
        got = outs.get(name)
        cx = Counterexample(name, tuple(self.setting.words(cycles)), want, got)
        if cx.confirmed and self.use_icarus:
            if self.replays >= ICARUS_REPLAYS:
                return Counterexample(name, cx.cycles, want, got, None,
                                      f"not replayed in Icarus: {ICARUS_REPLAYS} replays per proof")
            self.replays += 1
            words, note = icarus_outputs(self.verilog, self.core.top, self.setting, cycles,
                                         self.work / f"icarus{self.replays}")
            cx = Counterexample(name, cx.cycles, want, got, None if words is None else words.get(name), note)
        return cx

    def search(self, name: str, delta: Poly | None = None, extra=(), sequences: bool = False):
        """Candidates: the given assignments, the monomial points of ``delta`` at several scales, range
        extremes and random inputs; the first one the netlist gets wrong, confirmed (None if none)."""
        rng = random.Random(7)
        cands = list(self.shown) + [dict(x) for x in extra if x]  # what showed one output wrong first
        L = self.L
        if delta:
            m = min(delta.terms, key=lambda mm: (len(mm), mm))
            for scale in (1, 2, 16, 64, 127):
                for sign in (1, -1):
                    x = {}
                    for v in m:
                        lo, hi = self.table.box(v)
                        x[v] = max(lo, min(hi, sign * scale))
                    cands.append(x)
        if name.startswith("y["):
            o = int(name[2:-1])
            r = self.ranges.range(self.y_poly(o, L))
            if r is not None:
                cands += [r.hi_at, r.lo_at]
        delays = range(L + 2) if sequences else [L]
        for i in range(SEARCH_CANDIDATES):
            x = {}
            for dl in delays:
                for k in range(self.geo.n_d):
                    v = self.table.var("d", k, dl, *self.dbox, self.geo.n_d)
                    x[v] = rng.choice(self.dbox) if i % 2 else rng.randint(*self.dbox)
                for k in range(self.geo.n_g):
                    v = self.table.var("g", k, dl, *self.gbox, self.geo.n_g)
                    x[v] = rng.choice(self.gbox) if i % 2 else rng.randint(*self.gbox)
                if "in_valid" in self.net.ports:
                    x[self.table.var("in_valid", 0, dl, 0, 1)] = rng.randint(0, 1) if i % 3 else 1
                if "rst" in self.net.ports and i % 4 == 3:
                    x[self.table.var("rst", 0, dl, 0, 1)] = rng.randint(0, 1)
            cands.append(x)
        for x in cands:
            cx = self.confirm(name, x)
            if cx is not None and cx.confirmed:
                if x not in self.shown:
                    self.shown.append(x)
                return cx
        return None


__all__ = ["ConcreteInputs", "SEARCH_CANDIDATES", "ICARUS_REPLAYS"]
