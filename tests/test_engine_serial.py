"""The serial (row-column) output transform: Kronecker factors recovered exactly, the schedule's
condition, and the component alone in Amaranth's simulator against the matrix product."""

import numpy as np
import pytest
from amaranth.sim import Simulator
from hdl_helpers import run_simulation

from hdl.datapath import Datapath
from hdl.engine.serial import SerialTransform, pass_demands, pass_units, plan_passes, serial_fits, shares_unit
from hdl.options import HardwareOptions
from hdl.rowcol import kronecker_factors, signed_kronecker_factors
from hdl.widths import Range
from miner.constructive import constructive_card
from winohdl.core.suite import SUITE


def kron_all(factors):
    out = np.array([[1]], dtype=object)
    for f in factors:
        out = np.kron(out, np.array(f, dtype=object))
    return out


def run_groups(dut, vectors, n_out: int) -> list[list[int]]:
    """Each vector held on ``x`` with a start pulse, the component's outputs at its latency (and
    asserted to hold three cycles more)."""
    got = []

    async def bench(ctx):
        for v in vectors:
            for i, x in enumerate(v):
                ctx.set(getattr(dut.x, f"e{i}"), x)
            ctx.set(dut.start, 1)
            await ctx.tick()
            ctx.set(dut.start, 0)
            await ctx.tick().repeat(dut.latency - 1)
            got.append([ctx.get(getattr(dut.y, f"e{i}")) for i in range(n_out)])
            await ctx.tick().repeat(3)
            assert [ctx.get(getattr(dut.y, f"e{i}")) for i in range(n_out)] == got[-1]

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    run_simulation(sim)
    return got


@pytest.mark.parametrize("shapes", [[(2, 4), (2, 4)], [(4, 6), (3, 5)], [(2, 3), (2, 4), (3, 2)]],
                         ids=["2x4,2x4", "4x6,3x5", "3 axes"])
def test_kronecker_factors_recover_a_product(shapes):
    rng = np.random.default_rng(len(shapes))
    for _ in range(5):
        factors = [rng.integers(-3, 4, size=s).astype(object) for s in shapes]
        for f in factors:
            f[0, :] = rng.integers(1, 4, size=f.shape[1])  # no zero column
        m = kron_all(factors)
        found = kronecker_factors(m.tolist(), tuple(s[0] for s in shapes))
        assert found is not None
        assert (kron_all(found) == m).all()
        assert [np.shape(f) for f in found] == [tuple(s) for s in shapes]


def test_a_matrix_that_is_no_kronecker_product_is_refused():
    m = kron_all([[[1, 1, 0], [0, 1, 1]], [[1, 1, 1], [0, 1, -1]]])
    m[3, 5] += 1
    assert kronecker_factors(m.tolist(), (2, 2)) is None


def test_column_signs_are_taken_out():
    m = kron_all([[[1, 1, 1, 0], [0, 1, -1, 1]]] * 2)
    signs = np.array([1, -1, 1, 1, -1, 1, 1, -1, 1, 1, 1, -1, 1, 1, -1, 1], dtype=object)
    assert kronecker_factors((m * signs).tolist(), (2, 2)) is None   # the signs break the structure
    found_signs, factors = signed_kronecker_factors((m * signs).tolist(), (2, 2))
    assert (kron_all(factors) * np.array(found_signs, dtype=object) == m * signs).all()


@pytest.mark.parametrize("entry", [e for e in SUITE if e.geometry.axes > 1], ids=lambda e: e.name)
def test_every_multi_axis_suite_card_factors(entry):
    """The generator's integer A^T of each multi-axis suite card (signs folded in) factors."""
    dp = Datapath(constructive_card(entry.geometry), HardwareOptions(8, 8))
    signs, factors = signed_kronecker_factors(dp.scaled.AT, entry.geometry.output)
    assert (kron_all(factors) * np.array(signs, dtype=object) == np.array(dp.scaled.AT, dtype=object)).all()


def test_the_schedule_condition():
    passes = plan_passes([[[1, 1, 1, 1, 1, 0]] * 4, [[1, 1, 1, 1, 1, 0]] * 4])   # F(4x4): 6 + 4 fibres
    assert [p.fibres for p in passes] == [6, 4]
    assert serial_fits(passes, 10) and not serial_fits(passes, 9)
    one = plan_passes([[[1, 1]], [[1, 1, 1]]])
    assert [p.fibres for p in one] == [2, 1]


@pytest.mark.parametrize("per_stage", [1, 2, None], ids=["deep1", "deep2", "comb"])
def test_component_equals_the_matrix_product(per_stage):
    """Alone, without a modulus: the exact product, at the computed latency, for random and extreme
    inputs; the result holds until the next start."""
    a1 = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]
    a2 = [[1, 1, 1, 0], [0, 1, -1, 1]]
    passes = plan_passes([a1, a2])
    n_in, width = 24, 12
    box = Range(-(1 << (width - 1)), (1 << (width - 1)) - 1)
    full = kron_all([a1, a2])
    out_widths = [max(abs(int(v)) for v in row) and sum(abs(int(v)) for v in row).bit_length() + width
                  for row in full]
    dut = SerialTransform(passes, [box] * n_in, lambda r: list(r), out_widths, per_stage or 64)
    rng = np.random.default_rng(2)
    vectors = [rng.integers(box.lo, box.hi + 1, size=n_in).tolist() for _ in range(3)]
    vectors += [[box.lo] * n_in, [box.hi] * n_in]
    got = run_groups(dut, vectors, len(full))
    assert got == [(full @ np.array(v, dtype=object)).tolist() for v in vectors]


@pytest.mark.parametrize("per_stage", [1, 2], ids=["deep1", "deep2"])
def test_shared_unit_streamed_back_to_back(per_stage):
    """Both passes of F(4x4)'s A^T through one unit, the fibres streamed (zero outside their
    window), groups back to back at the least period :func:`shares_unit` allows: every group's
    result is the matrix product, and one cycle less is refused."""
    a1 = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]
    passes = plan_passes([a1, a1])
    period = next(p for p in range(1, 64) if shares_unit(passes, per_stage, p))
    assert period >= 6 + 4 + 2 and not shares_unit(passes, per_stage, period - 1)
    assert not shares_unit(plan_passes([a1, [[1, 1, 1, 0], [0, 1, -1, 1]]]), per_stage, 64)  # two matrices
    width = 12
    box = Range(-(1 << (width - 1)), (1 << (width - 1)) - 1)
    full = kron_all([a1, a1])
    out_widths = [sum(abs(int(v)) for v in row).bit_length() + width for row in full]
    dut = SerialTransform(passes, [box] * 36, lambda r: list(r), out_widths, per_stage,
                                streamed=True, shared=True)
    rng = np.random.default_rng(5)
    groups = [rng.integers(box.lo, box.hi + 1, size=36).tolist() for _ in range(4)]
    groups += [[box.lo] * 36, [box.hi] * 36]
    starts = [1 + period * i for i in range(len(groups))]
    got = {}

    async def bench(ctx):
        for cycle in range(starts[-1] + dut.latency + 2):
            ctx.set(dut.start, int(cycle in starts))
            for j in range(6):
                ctx.set(getattr(dut.x, f"e{j}"), 0)
            for g, s in enumerate(starts):
                f = cycle - s - 1
                if 0 <= f < 6:
                    for j in range(6):
                        ctx.set(getattr(dut.x, f"e{j}"), groups[g][f * 6 + j])
                if cycle == s + dut.latency:
                    got[g] = [ctx.get(getattr(dut.y, f"e{i}")) for i in range(16)]
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    run_simulation(sim)
    assert [got[g] for g in range(len(groups))] == [(full @ np.array(v, dtype=object)).tolist() for v in groups]


def test_words_are_kept_modulo_what_the_outputs_read():
    """With ``out_bits``, each word before the outputs is only as wide as they read (a column
    divisible by 2^k: k bits fewer), and the outputs are the matrix product modulo 2^out_bits."""
    a = [[2, 4, 4, 1, 1, 0], [0, 4, -4, 2, -2, 0], [0, 4, 4, 4, 4, 0], [0, 4, -4, 8, -8, 8]]  # F(4x4), G-odd
    passes = plan_passes([a, a])
    bits = 14
    demands = pass_demands(passes, [bits] * 16)
    # the first pass's results, fibre f (position f along the second pass's axis): column f of
    # the second pass's matrix is divisible by 2, 4, 4, 1, 1, 8
    assert [max(demands[0][passes[1].fibre_index(i, f, passes[1].shape)] for i in range(4)) for f in range(6)] == \
        [bits - k for k in (1, 2, 2, 0, 0, 3)]
    box = Range(-(1 << 15), (1 << 15) - 1)
    full = kron_all([a, a])
    # each unit's input word j: at most bits - k_j (its position's column, the other axis's least k is 0)
    units = pass_units(passes, [box] * 36, list, [bits] * 16)
    assert [[r.width for r in u[0]] for u in units] == [[bits - k for k in (1, 2, 2, 0, 0, 3)]] * 2
    assert [r.width for r in pass_units(passes, [box] * 36, list)[0][0]] == [16] * 6
    dut = SerialTransform(passes, [box] * 36, lambda r: list(r), [bits] * 16, 1, out_bits=[bits] * 16)
    rng = np.random.default_rng(9)
    vectors = [rng.integers(box.lo, box.hi + 1, size=36).tolist() for _ in range(3)] + [[box.lo] * 36, [box.hi] * 36]
    got = run_groups(dut, vectors, 16)
    assert [[y % (1 << bits) for y in ys] for ys in got] == \
        [[int(y) % (1 << bits) for y in full @ np.array(v, dtype=object)] for v in vectors]
