"""Engines generated for kernels known to be zero (hdl/engine/sparsity.py): lanes zero in every block
are not built, the walker visits only the blocks with a non-zero kernel, and the results stay
bit-exact against torch with the cycles the performance model says (Amaranth's simulator here; the
Icarus and Verilator runs are test_engine_sim's ``depthwise`` and ``blocks`` cases, the multiplier
count of a synthesised depthwise engine is below)."""

import numpy as np
import pytest

from hdl.engine.model import EngineModel, decode_output, torch_reference
from hdl.engine.options import EngineOptions
from hdl.engine.perf import schedule
from hdl.engine.plan import plan_engine
from hdl.engine.sparsity import BlockSchedule, KernelMask
from sim.stimulus import random_layer
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry

from engine_helpers import amaranth_run, block_sparse_mask, build_engine, datapath

G2 = Geometry.parse("2x2", "3x3", "1", "1")
G4 = Geometry.parse("4x4", "3x3", "1", "1")


def test_depthwise_keeps_the_diagonal_lanes_and_blocks():
    s = BlockSchedule.make(KernelMask.depthwise(8, 8), 4, 4)
    assert s.blocks == ((0, 0), (1, 1)) and s.lanes == frozenset((p, p) for p in range(4))
    o = EngineOptions(G2, 8, 8, (6, 6), (1, 1), 4, 4, kernel_mask=KernelMask.depthwise(8, 8))
    plan = plan_engine(o, datapath(G2, o))
    dense = plan_engine(EngineOptions(G2, 8, 8, (6, 6), (1, 1), 4, 4), datapath(G2, o))
    R = plan.datapath.rank
    assert plan.multipliers == R * 4 and dense.multipliers == R * 16
    assert o.issues_per_tile == 2 and o.weight_depth == 2 and o.group_cycles == 1
    weights = next(m for m in plan.memories if m.name == "weights")
    assert (weights.count, weights.depth) == (4, 2)     # a memory per live lane, a word per visited block
    # grouped (2 groups of 4 channels) with PK = PC = 2: two blocks per output group, every lane
    s = BlockSchedule.make(KernelMask.depthwise(8, 2), 2, 2)
    assert s.blocks == ((0, 0), (0, 1), (1, 0), (1, 1), (2, 2), (2, 3), (3, 2), (3, 3)) and len(s.lanes) == 4


def test_an_output_group_without_kernels_keeps_one_block():
    m = np.zeros((4, 4), bool)
    m[2, 3] = True
    s = BlockSchedule.make(KernelMask.from_array(m), 2, 2)
    assert s.blocks == ((0, 0), (1, 1)) and s.lanes == frozenset({(0, 1)})


def test_block_sparse_plan_and_performance_model():
    o = EngineOptions(G2, 6, 4, (5, 5), (1, 1), 2, 2, kernel_mask=block_sparse_mask())
    assert o.blocks.blocks == ((0, 1), (0, 2), (1, 0)) and (1, 0) not in o.blocks.lanes
    plan = plan_engine(o, datapath(G2, o))
    assert plan.multipliers == 3 * plan.datapath.rank
    assert o.macs == 25 * 6 * 9          # 6 kernels may be non-zero, 25 outputs each, 9 taps

    # a layer the walker bounds (64 issues per tile dense, 100 feature-map beats per frame): every
    # other input channel's kernels zero, the period falls by the tiles times the blocks skipped
    half = KernelMask.from_array(np.arange(4)[None, :].repeat(16, 0) % 2 == 0)
    sparse, dense = (EngineOptions(G2, 4, 16, (5, 5), (1, 1), kernel_mask=m) for m in (half, None))
    assert (sparse.issues_per_tile, dense.issues_per_tile) == (32, 64)
    for kind in ("winograd", "direct"):
        ps, pd = (plan_engine(x, datapath(G2, x), kind).performance for x in (sparse, dense))
        assert pd.period - ps.period == dense.n_tiles * 32 and ps.period == dense.n_tiles * 32
        assert ps.multipliers == pd.multipliers     # one lane (PK = PC = 1), used every other block


def test_kernel_mask_round_trips_and_names_the_engine():
    o = EngineOptions(G2, 6, 4, (5, 5), (1, 1), 2, 2, kernel_mask=block_sparse_mask())
    assert EngineOptions.from_json(o.to_json()) == o
    assert o.name != EngineOptions(G2, 6, 4, (5, 5), (1, 1), 2, 2).name
    assert "kernel_mask" not in EngineOptions(G2, 6, 4, (5, 5), (1, 1), 2, 2).to_json()


@pytest.mark.parametrize("make, message", [
    (lambda: EngineOptions(G2, 4, 4, (5, 5), kernel_mask=KernelMask.depthwise(2, 2)), "kernel mask is 2x2"),
    (lambda: KernelMask((8,), 3), "bit mask of 3 input channels"),
    (lambda: KernelMask.from_json({"channels": 2, "rows": ["zz"]}), "hexadecimal"),
    (lambda: KernelMask.from_array(np.ones(3)), "shape"),
    (lambda: EngineOptions(G2, 4, 4, (5, 5), kernel_mask=KernelMask.depthwise(4, 4), input_transform="serial"),
     None),
    (lambda: EngineOptions(G4, 12, 2, (7, 6), output_transform="serial", kernel_mask=KernelMask.from_array(
        [[c < 9 for c in range(12)], [True] * 12])), "6\\+4 fibres, more than the 9 visited blocks"),
])
def test_bad_kernel_masks(make, message):
    with pytest.raises(WinohdlError, match=message or "input-transform serial does not combine with a kernel mask"):
        o = make()       # (the serial B^T assumes K/PK x C/PC issues per pass: refused, not half-supported)
        plan_engine(o, datapath(o.geometry, o))


def test_weights_outside_the_mask_are_refused():
    o = EngineOptions(G2, 2, 2, (4, 4), kernel_mask=KernelMask.depthwise(2, 2))
    x, w = random_layer(o, np.random.default_rng(0))
    w[1, 0, 2, 2] = 3
    with pytest.raises(WinohdlError, match=r"kernel \(1, 0\) is non-zero"):
        EngineModel(o, datapath(G2, o)).weight_beats(w)


# (the depthwise and block-sparse layers run on Icarus and Verilator: test_engine_sim)
CASES = {
    # output group 1 has no kernel (it emits zeros from one block of zero weights); lanes off the
    # diagonal; the kernel transform on chip (its beats written through the block table) and two rings
    "empty_group": EngineOptions(G2, 4, 4, (4, 5), (1, 0), 2, 2, kernel_transform="hw", buffering="rings",
                                 kernel_mask=KernelMask.from_array(np.eye(4, dtype=bool)[[1, 0, 3, 2]] * [1, 1, 0, 0])),
    # the serial A^T (6 + 4 fibres) between groups of 10 visited blocks of 12 (C / PC): it still fits
    "serial_at": EngineOptions(G4, 12, 2, (7, 6), (1, 1), kernel_mask=KernelMask.from_array(
        [[c < 10 for c in range(12)], [c >= 2 for c in range(12)]])),
}


@pytest.mark.parametrize("case, kind", [("empty_group", "winograd"), ("empty_group", "direct"),
                                        ("serial_at", "winograd")])
def test_sparse_engine_streams_bit_exact_in_the_model_cycles(case, kind):
    """A load, frames back to back, a reload (the extremes), one more frame: bit-exact against torch
    and the model's beats, cycle for cycle the performance model's."""
    o = CASES[case]
    dp, plan, eng = build_engine(o, kind)
    assert (plan.output_transform.value == "serial") == (case == "serial_at" and kind == "winograd")
    rng = np.random.default_rng(1)
    x, w = random_layer(o, rng)
    x2, w2 = random_layer(o, rng, "max")
    layers = [(x, w), (x2, None), (x, None), (x2, w2), (x, None)]
    got, cycles = amaranth_run(eng, layers)
    model = EngineModel(o, dp, kind)
    for (xl, _), wl, beats in zip(layers, [w, w, w, w2, w2], got):
        assert beats == model.output_beats(xl, wl)
        assert (decode_output(o, [b["data"] for b in beats]) == torch_reference(o, xl, wl)).all()
    sched = schedule(o, plan.timing, 5, (True, False, False, True, False))
    assert cycles == [s["last_out"] - s["first"] + 1 for s in sched]
