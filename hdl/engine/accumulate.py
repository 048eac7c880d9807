"""The engine's output side: the accumulators, and (Winograd) A^T and the exact division.

Winograd: R x PK accumulators in the transform domain, A^T and the division once per (tile, output
channel); direct: the outputs themselves are accumulated. The accumulators clear by synchronous
reset with the group's last sum, whose total goes to a ``done`` register. Staggered
(:attr:`~hdl.engine.engine.LayerEngine.staggered`), fibre f of accumulators adds its sums f cycles
after fibre 0 and its ``done`` register holds the total for one cycle only, so the serial A^T's
first pass selects each fibre by an OR.
"""

from __future__ import annotations

import operator
from functools import reduce

from amaranth.hdl import Module, Mux, Signal, signed

from ..components import ConstantMatrixProduct, ExactDivision, word
from ..options import HardwareOptions
from .plan import EnginePlan
from .serial import SerialTransform


def division(plan: EnginePlan, divisions=None, in_ranges=None) -> ExactDivision:
    """The exact division of every output (or of ``divisions``: the serial transform's lanes)."""
    a, o = plan.arith, plan.options
    divisions = divisions or a.divisions
    in_ranges = in_ranges or a.hw(a.pre_ranges)[:len(divisions)]
    options = HardwareOptions(o.data_width, o.kernel_width, data_values=o.data_values)
    return ExactDivision(divisions, in_ranges, a.y_width, options, plan.stages.per_stage)


def accumulators(m: Module, engine: EnginePlan, reg, sums: dict, n_acc: int, valid, clear, clear_next) -> dict:
    """``n_acc`` accumulators per output lane pk, adding ``sums[pk, i]`` while ``valid`` and
    clearing with ``clear`` (the group's last sum, a register: ``clear_next`` is its input; fibre
    f's flags f cycles later when staggered). Returns ``{(pk, i): done}``: the total, registered.

    The accumulators have no reset of their own: each fibre's synchronous clear is a register that
    the domain's reset sets (``init`` 1), so they clear one cycle into a reset and stay clear through
    it, and their reset pin is a flip-flop's output, not ``rst | clear`` through a LUT."""
    per = n_acc // engine.slices
    valids, clears = [valid], [clear]
    # the accumulators' reset pins: ``clears`` again, but set by the domain's reset (a different
    # reset value, so synthesis keeps them apart from ``clears``)
    wipes = [reg(clear_next, "acc_wipe", reset_less=False, init=1)]
    # staggered, the ``done`` registers' reset pins: ``~clears``, a register each (a shift of the
    # first, no logic), not an inverter after ``clears``, whose routing into them is long
    holds = [reg(~clear_next, "acc_hold", reset_less=False, init=1)] if engine.staggered else []
    # staggered, fibre f's flags f cycles late (the four chains built stage by stage)
    for f in range(1, engine.slices):
        valids.append(reg(valids[-1], f"valid_a_f{f}", reset_less=False))
        clears.append(reg(clears[-1], f"acc_clear_f{f}", reset_less=False))
        wipes.append(reg(clears[-2], f"acc_wipe_f{f}", reset_less=False, init=1))
        holds.append(reg(holds[-1], f"acc_hold_f{f}", reset_less=False, init=1))
    signs = engine.acc_signs
    done = {}
    for pk in range(engine.opts.PK):
        for i in range(n_acc):
            valid_i, clear_i, wipe_i = valids[i // per], clears[i // per], wipes[i // per]
            w = engine.accumulator_widths[i]
            # the names matter on ECP5: the adder feeds two flip-flops (the accumulator, ``done``) and
            # nextpnr packs beside the carry chain the one whose cell name sorts last; named so, it is
            # the accumulator, and its loop has no route between chain and register
            acc = Signal(signed(w), name=f"acc_sum{pk}_{i}", reset_less=True)
            total = Signal(signed(w), name=f"total{pk}_{i}")
            m.d.comb += total.eq(acc - sums[pk, i] if signs and signs[i] < 0 else acc + sums[pk, i])
            fin = Signal(signed(w), name=f"acc_done{pk}_{i}", reset_less=True)
            # the clear first, the enable second: Yosys then infers a flip-flop whose synchronous
            # reset overrides its enable (ECP5 TRELLIS_FF, Xilinx FDRE); a clear nested inside the
            # enable is not such a flip-flop and costs a LUT per accumulator bit
            with m.If(wipe_i):
                m.d.sync += acc.eq(0)
            with m.Elif(valid_i):
                m.d.sync += acc.eq(total)
            if engine.staggered:
                # the total for one cycle, zero otherwise: a synchronous reset, no logic
                m.d.sync += fin.eq(Mux(holds[i // per], 0, total))
            else:
                with m.If(clear_i):
                    m.d.sync += fin.eq(total)
            done[pk, i] = fin
    return done


def output_words(m: Module, engine: EnginePlan, reg, done: dict, clear, out_valid) -> tuple[dict, int]:
    """Winograd: A^T (serial or parallel) and the exact division of every lane's ``done`` totals
    (``clear``: the first fibre's last sum; ``out_valid``: one cycle later). Returns
    ``({(pk, o): output word}, cycles from out_valid to the words)``."""
    o, a, tm = engine.opts, engine.arith, engine.stages
    g, ps, n_acc = o.geometry, tm.per_stage, engine.dp.rank
    per = n_acc // engine.slices
    outs = {}
    for pk in range(o.PK):
        if engine.passes:
            if engine.lane_divisions:
                widths = [a.y_width] * g.n_y
                make_division = lambda rows: division(engine, engine.lane_divisions, rows)  # noqa: E731
            else:
                widths, make_division = [r.width for r in a.hw(a.pre_ranges)], None
            m.submodules[f"at{pk}"] = at = SerialTransform(
                engine.passes, engine.accumulator_ranges, a.hw, widths, ps, make_division,
                streamed=engine.staggered, shared=engine.output_unit_shared,
                out_bits=a.output_bits)
            if engine.staggered:
                # fibre f finishes f cycles after the first, when the first pass reads it: the
                # only total not zero in that cycle, so an OR selects it
                m.d.comb += at.start.eq(clear)
                for j in range(per):
                    m.d.comb += word(at.x, j).eq(
                        reduce(operator.or_, [done[pk, f * per + j] for f in range(engine.slices)]))
            else:
                m.d.comb += at.start.eq(out_valid)
                for r in range(n_acc):
                    m.d.comb += word(at.x, r).eq(done[pk, r])
            if engine.lane_divisions:
                for oi in range(g.n_y):
                    outs[pk, oi] = word(at.y, oi)
                continue
        else:
            m.submodules[f"at{pk}"] = at = ConstantMatrixProduct(
                engine.dp.output_graph, a.acc_widths, a.hw(a.at_node_ranges), a.hw(a.pre_ranges), f"at{pk}", ps)
            for r in range(n_acc):
                m.d.comb += word(at.x, r).eq(done[pk, r])
        m.submodules[f"div{pk}"] = div = division(engine)
        for oi in range(g.n_y):
            m.d.comb += word(div.x, oi).eq(reg(word(at.y, oi), f"pre{pk}_{oi}"))
        for oi in range(g.n_y):
            outs[pk, oi] = word(div.y, oi)
    extra = tm.write - tm.accumulate - 1
    assert extra == at.latency - engine.staggered + (0 if engine.lane_divisions else 1 + div.latency), \
        "the timing plan does not match the output side"
    return outs, extra
