"""The linear layer walking only its non-zero weights: fixed at generation, a zero weight costs no cycle."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from amaranth.hdl import Const, Module, Mux, Signal, signed
from amaranth.lib.memory import Memory

from winohdl.core.errors import WinohdlError

from ..pipeline import register
from ..widths import product_range
from .axis import flag_chain, lane, output_queue, pack, signed_register, word_range
from .linear import FINISH, Linear

LEAD = 2
"""Cycles the input word's address waits for its column, read from the walk's memory and registered."""


@dataclass(frozen=True)
class ColumnWalk:
    """The non-zero weights of an M x N matrix in column order, Q at a time: per entry the column j and,
    per multiplier, the row whose weight it takes (-1: none, its weight zero). A column of more than Q
    non-zeros takes several entries, a zero column none; a matrix of zeros keeps one entry (the frame
    still ends)."""

    entries: tuple[tuple[int, tuple[int, ...]], ...]

    @classmethod
    def make(cls, weights, multipliers: int) -> "ColumnWalk":
        W, Q = np.asarray(weights), multipliers
        out = []
        for j in range(W.shape[1]):
            rows = [int(r) for r in np.flatnonzero(W[:, j])]
            out += [(j, tuple(rows[i:i + Q]) + (-1,) * (Q - len(rows[i:i + Q]))) for i in range(0, len(rows), Q)]
        return cls(tuple(out) or ((0, (-1,) * Q),))

    @staticmethod
    def cycles(weights, multipliers: int) -> int:
        """Entries (cycles) a frame: sum over the columns of ceil(non-zeros / Q), at least one."""
        per = np.count_nonzero(np.asarray(weights), axis=0)
        return max(1, int((-(-per // multipliers)).sum()))


class SparseLinear(Linear):
    """``logits = W x + bias`` exactly and the arg-max, as :class:`~hdl.stream.linear.Linear`, with ``multipliers``
    (Q) walking only the non-zero weights (:class:`ColumnWalk`): each cycle one input word, read from the double
    buffer at the entry's column, times up to Q of its column's weights, each product added into the
    accumulator of its row. A frame takes :meth:`ColumnWalk.cycles` cycles (a new frame every
    ``max(N / L, those)``); all M logits come out in one beat (the output of ``parallel`` = M).

    Parameters
    ----------
    weights, bias, lanes, in_width, weight_width
        As :class:`~hdl.stream.linear.Linear`'s.
    multipliers : int
        Q, the multipliers (at least 1).
    """

    @classmethod
    def check(cls, weights, bias, lanes: int = 1, multipliers: int = 1, in_width: int = 8,
              weight_width: int = 8) -> None:
        if isinstance(multipliers, bool) or not isinstance(multipliers, int) or multipliers < 1:
            raise WinohdlError(f"SparseLinear: multipliers must be a whole number >= 1, got {multipliers!r}"[:120])
        W = np.asarray(weights, dtype=object)
        Linear.check(weights, bias, lanes, W.shape[0] if W.ndim == 2 and W.shape[0] else 1, in_width, weight_width)

    def __init__(self, weights, bias, lanes: int = 1, multipliers: int = 1, in_width: int = 8, weight_width: int = 8):
        self.multipliers = multipliers
        self.walk = ColumnWalk.make(np.asarray(weights, dtype=np.int64), multipliers)
        super().__init__(weights, bias, lanes, np.asarray(weights).shape[0], in_width, weight_width)

    def elaborate(self, platform):
        m = Module()
        (M, N), L, Q = self.weights.shape, self.lanes, self.multipliers
        NB, E = N // L, len(self.walk.entries)
        finish = FINISH + LEAD + 1 + self.argmax_levels
        q = output_queue(m, self.m_axis, finish)
        full = [Signal(name="full0"), Signal(name="full1")]
        rhalf, e, issue = Signal(name="rhalf"), Signal(range(E), name="e"), Signal(name="issue")
        last = Const(1) if E == 1 else self._last_flag(m, e == E - 2, issue, "laste")
        m.d.comb += [issue.eq(Mux(rhalf, full[1], full[0]) & (~last | q.ok)), q.reserve.eq(issue & last)]
        with m.If(issue):
            m.d.sync += e.eq(Mux(last, 0, e + 1))
            with m.If(last):
                m.d.sync += rhalf.eq(~rhalf)
        # a half is freed once its last entry's word is read, LEAD cycles after the issue
        half = register(m, rhalf, "rhalf_d", cycles=LEAD)      # the half the entries in flight read
        rp = self._double_buffer(m, full, NB, flag_chain(m, issue & last, LEAD, "freed"), half).read_port()
        jb, jl, ws, sels = self._entry(m, e, NB, L)
        m.d.comb += rp.addr.eq(Mux(half, NB, 0) + jb)
        x = self._input_word(m, rp, jl)
        valid = flag_chain(m, issue, 4 + LEAD, "valid")
        first = flag_chain(m, issue & (e == 0), 4 + LEAD, "first")
        pr = product_range(word_range(self.in_width), word_range(self.weight_width))
        prods = []
        for i in range(Q):
            w = signed_register(m, lane(register(m, ws, "w_word", cycles=2), i, self.weight_width),
                                word_range(self.weight_width), f"w{i}")
            prods.append((signed_register(m, x * w, pr, f"prod{i}"), register(m, sels[i], f"sel{i}", cycles=4)))
        accs = []
        for r in range(M):
            acc = Signal(signed(self.logit_width), name=f"acc{r}", reset_less=True)
            terms = sum(Mux(s == r + 1, p, 0) for p, s in prods)      # select 0: no weight
            with m.If(valid):
                m.d.sync += acc.eq(Mux(first, self.bias[r], acc) + terms)
            accs.append(acc)
        done = flag_chain(m, issue & last, 5 + LEAD, "done")
        self._argmax(m, q, accs, done, Const(0), 1)
        m.d.comb += q.last.eq(flag_chain(m, issue & last, finish, "last"))
        return m

    def _entry(self, m, e, NB: int, L: int):
        """Entry ``e`` of the walk, read from a ROM and registered (LEAD cycles after ``e``): the input word's
        address and lane, the Q weights packed, and per multiplier its row plus one (0: none)."""
        Q, ww = self.multipliers, self.weight_width
        jbw, jlw, sw = max(1, (NB - 1).bit_length()), max(1, (L - 1).bit_length()), self.weights.shape[0].bit_length()
        words = []
        for j, rows in self.walk.entries:
            w = pack([int(self.weights[r, j]) if r >= 0 else 0 for r in rows], ww)
            s = sum((r + 1) << (i * sw) for i, r in enumerate(rows))
            words.append((j // L) | (j % L) << jbw | w << (jbw + jlw) | s << (jbw + jlw + Q * ww))
        rom = Memory(shape=jbw + jlw + Q * (ww + sw), depth=len(words), init=words)
        m.submodules.walk = rom
        rp = rom.read_port()
        m.d.comb += rp.addr.eq(e)
        q = register(m, rp.data, "entry")
        ws = q[jbw + jlw:jbw + jlw + Q * ww]
        sels = [q[jbw + jlw + Q * ww + i * sw:jbw + jlw + Q * ww + (i + 1) * sw] for i in range(Q)]
        return q[:jbw], q[jbw:jbw + jlw], ws, sels
