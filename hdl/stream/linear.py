"""Linear (fully connected) layer with arg-max: the network's classifier at the end of the stream."""

from __future__ import annotations

import numpy as np
from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, signed
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from winohdl.core.errors import WinohdlError

from ..engine.copies import COPY_REGISTERS, operand_copies
from ..engine.engine import axis_stream
from ..pipeline import less, register
from ..widths import Range, product_range, signed_width
from ..components import CheckedComponent
from .axis import (flag_chain, flag_copies, lane, output_queue, pack, signed_register, table_lookup,
                   word_range)

FINISH = 6
"""Cycles from a pass's last read to its beat's push: input buffer and weight ROM read and their
output registers, operand registers, products, accumulators, the arg-max register (the arg-max tree's
levels come on top)."""
FANOUT = 2
"""Multipliers a copy of the dense unit's input word feeds (:func:`hdl.engine.copies.operand_copies`)."""
OPERAND = 1 + COPY_REGISTERS
"""The dense unit's input word registered once more, then copied per :data:`FANOUT` multipliers and registered as
their operand (on top of :data:`FINISH`; the walking unit, :mod:`hdl.stream.sparse_linear`, has its own path)."""


class Linear(CheckedComponent):
    """``logits = W x + bias`` exactly, and the arg-max class, for each frame of N input words.

    The N input words (``lanes`` a beat, in stream order: word j is column j of ``weights``; the
    caller permutes torch's flatten order to the stream's) go into one half of a double buffer
    (block RAM, 2 x N / L words), so the next frame streams in while this one is computed. The
    outputs are computed ``parallel`` (P) at a time: pass p reads the N words one per cycle and
    multiplies each with column j of rows ``p*P .. p*P + P - 1`` of ``W`` (a ROM of M / P x N words
    of P weights, ``amaranth.lib.memory``) in P multipliers into P accumulators that start at the
    bias. So a frame takes ``M / P x N`` cycles of compute (a new frame every
    ``max(N / L, M * N / P)`` cycles).

    Output: one beat per pass (M / P beats a frame): ``tdata`` holds the P exact logits of classes
    ``p*P + i`` (lane i, ``logit_width`` bits each, width from the weights' and inputs' exact ranges),
    then at bit ``P * logit_width`` the arg-max over classes ``0 .. p*P + P - 1``; on the frame's
    last beat (``tlast``) that is the frame's arg-max. Ties go to the lowest class index.

    Parameters
    ----------
    weights : array-like of int, M x N
        The weights, ``weight_width``-bit two's complement.
    bias : list of int
        M biases (at the accumulators' exponent).
    lanes : int
        Input words per beat (divides N).
    parallel : int
        Multipliers P: outputs computed at once (divides M).
    in_width, weight_width : int
        Bits of an input word and of a weight.

    Attributes
    ----------
    s_axis : In(axis_stream(lanes * in_width))
        The flat input, N / L beats a frame; ``tlast`` not read (the unit counts).
    m_axis : Out(axis_stream(parallel * logit_width + index_bits))
        The logits and the running arg-max (see above).
    """

    @classmethod
    def check(cls, weights, bias, lanes: int = 1, parallel: int = 1, in_width: int = 8,
              weight_width: int = 8) -> None:
        W = np.asarray(weights, dtype=object)
        if W.ndim != 2 or 0 in W.shape:
            raise WinohdlError(f"Linear: weights of shape {W.shape} (want M x N, both at least 1)")
        M, N = W.shape
        wr = word_range(weight_width)
        if len(bias) != M or lanes < 1 or parallel < 1 or N % lanes or M % parallel:
            raise WinohdlError(f"Linear: {M} x {N} weights, {len(bias)} biases, {lanes} lanes, {parallel} "
                               "multipliers (M biases; lanes divide N; multipliers divide M)")
        if W.min() < wr.lo or W.max() > wr.hi:
            raise WinohdlError(f"Linear: weights in [{W.min()}, {W.max()}] do not fit {weight_width} bits")

    def __init__(self, weights, bias, lanes: int = 1, parallel: int = 1, in_width: int = 8, weight_width: int = 8):
        W = np.asarray(weights, dtype=object)
        M, N = W.shape
        self.weights, self.bias = W, [int(b) for b in bias]
        self.lanes, self.parallel, self.in_width, self.weight_width = lanes, parallel, in_width, weight_width
        xr = word_range(in_width)
        lo = [self.bias[r] + sum(min(w * xr.lo, w * xr.hi) for w in W[r]) for r in range(M)]
        hi = [self.bias[r] + sum(max(w * xr.lo, w * xr.hi) for w in W[r]) for r in range(M)]
        self.logit_range = Range(min(lo), max(hi))
        self.logit_width = signed_width(self.logit_range.lo, self.logit_range.hi)
        self.index_bits = max(1, (M - 1).bit_length())
        super().__init__({"s_axis": In(axis_stream(lanes * in_width)),
                          "m_axis": Out(axis_stream(parallel * self.logit_width + self.index_bits))})

    def elaborate(self, platform):
        m = Module()
        (M, N), L, P = self.weights.shape, self.lanes, self.parallel
        NB, passes = N // L, M // P
        finish = FINISH + 1 + OPERAND + self.argmax_levels
        q = output_queue(m, self.m_axis, finish)
        full = [Signal(name="full0"), Signal(name="full1")]
        # the reader: pass p, input word j = jb * L + jl, weight address p * N + j
        rhalf = Signal(name="rhalf")
        jb, jl = Signal(range(NB), name="jb"), Signal(range(L), name="jl")
        p, wa = Signal(range(passes), name="p"), Signal(range(passes * N), name="wa")
        issue = Signal(name="issue")
        lastj = self._last_word(m, jb, jl, NB, L, issue)
        m.d.comb += [issue.eq(Mux(rhalf, full[1], full[0]) & (~lastj | q.ok)), q.reserve.eq(issue & lastj)]
        with m.If(issue):
            m.d.sync += [wa.eq(Mux(wa == passes * N - 1, 0, wa + 1)), jl.eq(Mux(jl == L - 1, 0, jl + 1))]
            with m.If(jl == L - 1):
                m.d.sync += jb.eq(Mux(jb == NB - 1, 0, jb + 1))
            with m.If(lastj):
                m.d.sync += p.eq(Mux(p == passes - 1, 0, p + 1))
                with m.If(p == passes - 1):
                    m.d.sync += rhalf.eq(~rhalf)
        rp = self._double_buffer(m, full, NB, issue & lastj & (p == passes - 1), rhalf).read_port()
        m.d.comb += rp.addr.eq(Mux(rhalf, NB, 0) + jb)
        # the operand registered once more, then copied per FANOUT multipliers and registered as their operand
        # (which the DSP blocks absorb): with every block of the part in use, a unit's blocks are wherever the
        # placer finds room, and one register routed to all of them held the digits network at 119 MHz
        x = signed_register(m, self._input_word(m, rp, jl), word_range(self.in_width), "x_q")
        xs = operand_copies(m, x, "x", P, FANOUT)
        rom = register(m, self._weight_rom(m, wa), "w_word", cycles=1 + OPERAND)
        # the last register of each flag copied per accumulator: each selects in a whole logit word
        valid = flag_copies(m, flag_chain(m, issue, 3 + OPERAND, "valid"), P, "valid")
        first = flag_copies(m, flag_chain(m, issue & (jb == 0) & (jl == 0), 3 + OPERAND, "first"), P, "first")
        biases = table_lookup(m, [pack(self.bias[k * P:(k + 1) * P], self.logit_width) for k in range(passes)],
                              P * self.logit_width, register(m, p, "p_bias", cycles=3 + OPERAND), "bias")
        accs = []
        for i in range(P):
            w = signed_register(m, lane(rom, i, self.weight_width), word_range(self.weight_width), f"w{i}")
            pr = product_range(word_range(self.in_width), word_range(self.weight_width))
            prod = signed_register(m, xs[i // FANOUT] * w, pr, f"prod{i}")
            acc = Signal(signed(self.logit_width), name=f"acc{i}", reset_less=True)
            with m.If(valid[i]):
                m.d.sync += acc.eq(Mux(first[i], lane(biases, i, self.logit_width), acc) + prod)
            accs.append(acc)
        done = flag_chain(m, issue & lastj, 5 + OPERAND, "done")
        self._argmax(m, q, accs, done, register(m, p, "p_done", cycles=5 + OPERAND), passes)
        m.d.comb += q.last.eq(flag_chain(m, issue & lastj & (p == passes - 1), finish, "last"))
        return m

    def _last_word(self, m, jb, jl, NB: int, L: int, issue):
        """Whether the reader is at the input's last word ``jb * L + jl == N - 1`` (:meth:`_last_flag`)."""
        if NB * L == 1:
            return Const(1)
        return self._last_flag(m, (jb == NB - 1) & (jl == L - 2) if L > 1 else jb == NB - 2, issue, "lastj")

    @staticmethod
    def _last_flag(m, before, issue, name: str):
        """A register set by the issue at which ``before`` holds, the one before the last (no comparator
        before the reservation of an output credit)."""
        last = Signal(name=name)
        with m.If(issue):
            m.d.sync += last.eq(before)
        return last

    def _double_buffer(self, m, full, NB: int, freed, half) -> Memory:
        """The input's double buffer (2 x N / L words) and its writer (:meth:`_writer`): half k is ``full[k]``
        from its last beat written to ``freed`` while ``half`` is k (its last word read)."""
        # the halves are never read and written at once (the full flags), so no read-write bypass: without
        # this Yosys put a LUT after the block RAM, which kept its output register in the fabric
        buf = Memory(shape=self.lanes * self.in_width, depth=2 * NB, init=[], attrs={"no_rw_check": 1})
        m.submodules.inputs = buf
        filled, whalf = self._writer(m, buf, full, NB)
        for k in (0, 1):      # both flags in one place: the writer may fill one half as the reader frees the other
            m.d.sync += full[k].eq((full[k] & ~(freed & (half == k))) | (filled & (whalf == k)))
        return buf

    def _input_word(self, m, rp, jl):
        """The input word of lane ``jl`` (given with ``rp``'s address) read at ``rp``, signed: its memory's output
        registered (the block RAM's own output register: a block RAM's clock-to-out and the lane multiplexer
        were the network's critical path into the multipliers), then selected and registered."""
        words = Array([lane(register(m, rp.data, "in_word"), i, self.in_width) for i in range(self.lanes)])
        return signed_register(m, words[register(m, jl, "jl_d", cycles=2)], word_range(self.in_width), "x")

    def _writer(self, m, buf, full, NB):
        """The input side: N / L beats into the free half of the double buffer; returns (a half is
        filled this cycle, the half being written)."""
        st = self.s_axis
        whalf, wcount = Signal(name="whalf"), Signal(range(NB), name="wcount")
        m.d.comb += st.tready.eq(~Mux(whalf, full[1], full[0]))
        hs = st.tvalid & st.tready
        wp = buf.write_port()
        m.d.comb += [wp.addr.eq(Mux(whalf, NB, 0) + wcount), wp.data.eq(st.tdata), wp.en.eq(hs)]
        with m.If(hs):
            m.d.sync += wcount.eq(Mux(wcount == NB - 1, 0, wcount + 1))
            with m.If(wcount == NB - 1):
                m.d.sync += whalf.eq(~whalf)
        return hs & (wcount == NB - 1), whalf

    def _weight_rom(self, m, addr):
        """The weights, word ``p * N + j`` = column j of rows ``p*P ..``, read one cycle after ``addr``."""
        (M, N), P = self.weights.shape, self.parallel
        words = [pack(self.weights[k * P:(k + 1) * P, j], self.weight_width) for k in range(M // P) for j in range(N)]
        rom = Memory(shape=P * self.weight_width, depth=len(words), init=words)
        m.submodules.weights = rom
        rp = rom.read_port()
        m.d.comb += rp.addr.eq(addr)
        return rp.data

    def _argmax(self, m, q, accs, done, p, passes):
        """The beat's best logit (lowest lane on ties) against the frame's best so far; the output
        register: the logits and the running arg-max. The logits are held when the accumulators
        finish, and the comparisons go down a tree, each level a compare then a select, each registered
        (:meth:`_argmax_pair`), so the output is pushed :attr:`argmax_levels` + 2 cycles after the
        accumulators finish. With one pass a frame the first pass's best is the frame's: no compare."""
        P, levels = self.parallel, self.argmax_levels
        held = [Signal(signed(self.logit_width), name=f"logit{i}", reset_less=True) for i in range(P)]
        with m.If(done):
            m.d.sync += [h.eq(a) for h, a in zip(held, accs)]
        cands = [(h, Const(i, self.index_bits)) for i, h in enumerate(held)]
        for level in range(levels // 2):      # the left (lower index) wins unless the right is larger
            cands = [self._argmax_pair(m, cands[n:n + 2], f"best{level}_{n // 2}") for n in range(0, len(cands), 2)]
        beat_v, beat_i = cands[0]
        # the logits travel beside the tree (the next pass may finish before this one's arg-max)
        logits = register(m, Cat(*held), "logits_d", cycles=levels) if levels else Cat(*held)
        ready = flag_chain(m, done, 1 + levels, "argmax")
        pd = register(m, p, "p_argmax", cycles=1 + levels)
        best_v = Signal(signed(self.logit_width), name="best_v", reset_less=True)
        best_i = Signal(self.index_bits, name="best_i", reset_less=True)
        first = register(m, p == 0, "first_pass", cycles=1 + levels)
        take = first | less(best_v, beat_v) if passes > 1 else Const(1)
        new_v, new_i = Mux(take, beat_v, best_v), Mux(take, pd * P + beat_i, best_i)
        out = Signal(P * self.logit_width + self.index_bits, name="out", reset_less=True)
        with m.If(ready):
            m.d.sync += [best_v.eq(new_v), best_i.eq(new_i), out.eq(Cat(logits, new_i[:self.index_bits]))]
        m.d.comb += [q.data.eq(out), q.push.eq(flag_chain(m, ready, 1, "push"))]

    def _argmax_pair(self, m, pair, name: str):
        """One level of the arg-max tree for two candidates (value, index) in two registered cycles: the
        comparison (a carry chain) with both candidates beside it, then the selection."""
        regs = [(register(m, v, f"{name}_v{k}"), register(m, i, f"{name}_i{k}")) for k, (v, i) in enumerate(pair)]
        v = Signal(signed(self.logit_width), name=f"{name}_v", reset_less=True)
        i = Signal(self.index_bits, name=f"{name}_i", reset_less=True)
        if len(pair) == 1:
            m.d.sync += [v.eq(regs[0][0]), i.eq(regs[0][1])]
        else:
            (lv, li), (rv, ri) = regs
            right = register(m, less(pair[0][0], pair[1][0]), f"{name}_right")
            m.d.sync += [v.eq(Mux(right, rv, lv)), i.eq(Mux(right, ri, li))]
        return v, i

    @property
    def argmax_levels(self) -> int:
        """Registered stages of the arg-max tree over the P logits of a pass: two per level."""
        return 2 * (self.parallel - 1).bit_length()
