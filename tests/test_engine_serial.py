"""The serial (row-column) output transform: Kronecker factors recovered exactly, the schedule's
condition, and the component alone in Amaranth's simulator against the matrix product."""

import numpy as np
import pytest
from amaranth.sim import Simulator

from hdl.datapath import Datapath
from hdl.engine.serial import (SerialOutputTransform, kronecker_factors, plan_passes, serial_fits,
                               signed_kronecker_factors)
from hdl.options import HardwareOptions
from hdl.widths import Range
from miner.constructive import constructive_card
from winohdl.core.suite import SUITE


def kron_all(factors):
    out = np.array([[1]], dtype=object)
    for f in factors:
        out = np.kron(out, np.array(f, dtype=object))
    return out


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
    dut = SerialOutputTransform(passes, [box] * n_in, lambda r: list(r), out_widths, per_stage or 64)
    rng = np.random.default_rng(2)
    vectors = [rng.integers(box.lo, box.hi + 1, size=n_in).tolist() for _ in range(3)]
    vectors += [[box.lo] * n_in, [box.hi] * n_in]
    got = []

    async def bench(ctx):
        for v in vectors:
            for i, x in enumerate(v):
                ctx.set(getattr(dut.x, f"e{i}"), x)
            ctx.set(dut.start, 1)
            await ctx.tick()
            ctx.set(dut.start, 0)
            await ctx.tick().repeat(dut.latency - 1)
            got.append([ctx.get(getattr(dut.y, f"e{i}")) for i in range(len(full))])
            await ctx.tick().repeat(3)
            assert [ctx.get(getattr(dut.y, f"e{i}")) for i in range(len(full))] == got[-1]

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert got == [(full @ np.array(v, dtype=object)).tolist() for v in vectors]
