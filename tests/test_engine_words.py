"""Word-sparse Winograd engines (:class:`hdl.engine.sparsity.WordMask`, ``EngineOptions.word_mask``): the
walk each position makes over its non-zero words, bit-exact streams in the performance model's cycles, the
options they need, and weights that do not match the mask."""

import numpy as np
import pytest

from hdl.engine.engine import LayerEngine
from hdl.engine.model import EngineModel, output_beats
from hdl.engine.options import EngineOptions
from hdl.engine.perf import schedule
from hdl.engine.plan import plan_engine
from hdl.engine.sparsity import WordMask, WordSchedule
from hdl.engine.words import word_contents
from sim.stimulus import random_layer
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry
from winohdl.core.words import pack
from winohdl.network.winograd_weights import row_scales

from engine_helpers import amaranth_run, datapath

G = Geometry.parse("2x2", "3x3")


def words_layer(C, K, PK, density=0.2, seed=0, geometry=G, **extra):
    """(options, datapath, U): a word mask of ``density`` and U words s_r x an integer inside it (the words a
    Winograd-domain layer's engine takes: winograd_weights.engine_words), zero outside."""
    rng = np.random.default_rng(seed)
    dp = datapath(geometry, EngineOptions(geometry, C, K, (6, 6), (1, 1)))
    mask = rng.random((K, C, dp.rank)) < density
    o = EngineOptions(geometry, C, K, (6, 6), (1, 1), PK, pipeline="deep", word_mask=WordMask.from_array(mask),
                      **extra)
    scales = row_scales(dp.scaled)
    top = [min(-r.lo, r.hi) // abs(s) for r, s in zip(dp.u_ranges, scales)]
    u = np.zeros(mask.shape, dtype=object)
    for k, c, r in zip(*np.nonzero(mask)):
        u[k, c, r] = scales[r] * int(rng.integers(-top[r], top[r] + 1))
    return o, dp, u


def beats(plan, u):
    K, C, _ = u.shape
    return [pack([int(v) for v in u[k, c]], plan.w_width) for k in range(K) for c in range(C)]


def test_each_position_walks_its_own_words():
    """Per output group and input channel, as many issues as the position with the most words; each position's
    select names the output lane of its j-th word (its word zero where it has fewer); an empty group one issue."""
    a = np.zeros((4, 2, 3), bool)
    a[0, 0, 0] = a[1, 0, 0] = a[1, 0, 2] = a[0, 1, 1] = True     # group 0: c 0 needs 2 issues, c 1 one
    s = WordSchedule.make_words(WordMask.from_array(a), 2)          # group 1 (k 2, 3): no word
    assert s.blocks == ((0, 0), (0, 0), (0, 1), (1, 0))
    assert s.selects == ((0, 0, 1), (1, 0, 0), (0, 0, 0), (0, 0, 0))
    assert s.words == ((0, -1, 1), (1, -1, -1), (-1, 0, -1), (-1, -1, -1))
    assert s.lanes == frozenset({(0, 0)}) and s.group_cycles == 1
    two = WordSchedule.make_words(WordMask.from_array(a), 2, 2)     # both channels an issue: lane 0's two words
    assert two.blocks == ((0, 0), (0, 0), (1, 0)) and two.lanes == frozenset({(0, 0), (0, 1)})
    assert two.selects[0] == (0, 0, 1, 0, 0, 0) and two.words[0] == (0, -1, 1, -1, 0, -1)
    m = WordMask.from_array(a)
    assert WordMask.from_json(m.to_json()) == m and (m.array() == a).all()


def test_a_folded_multiplier_walks_the_words_of_its_positions():
    """Fold F: multiplier j serves positions j F .. j F + F - 1, walking their words position by position;
    its select is the output lane, and the position's index above the lane's bits."""
    a = np.zeros((2, 1, 4), bool)
    a[0, 0, 0] = a[1, 0, 1] = a[0, 0, 1] = a[1, 0, 3] = True
    s = WordSchedule.make_words(WordMask.from_array(a), 2, 1, 2)      # multiplier 0: r 0, 1; multiplier 1: r 2, 3
    assert s.blocks == ((0, 0),) * 3
    assert s.positions == ((0, 3), (1, 2), (1, 2)) and s.words == ((0, 1), (0, -1), (1, -1))
    assert s.selects == ((0, 1 | 1 << 1), (0 | 1 << 1, 0), (1 | 1 << 1, 0))


@pytest.mark.parametrize("C, K, PK, PC, gating, fold, card", [
    (3, 4, 4, 1, "none", 1, G), (3, 4, 2, 1, "none", 1, G), (1, 8, 8, 1, "none", 1, G), (4, 4, 2, 2, "none", 1, G),
    (3, 4, 4, 1, "zero-operand", 1, G), (3, 4, 4, 1, "none", 2, G), (4, 4, 2, 2, "none", 4, G),
    (2, 2, 1, 1, "none", 16, G), (3, 4, 4, 1, "none", 3, Geometry.parse("1x1", "3x3"))],
    ids=["one_group", "two_groups", "one_channel", "two_input_lanes", "gated", "fold2", "fold4_two_input_lanes",
         "one_multiplier_one_lane", "direct_card_fold3"])
def test_word_sparse_engine_is_bit_exact_in_the_modelled_cycles(C, K, PK, PC, gating, fold, card):
    """R / F x PC multipliers for the whole layer, bit-exact against the model of its U (gaps, back-pressure, a
    ReLU'd frame, extremes) in the performance model's cycles; fewer multiplier-cycles than the dense engine.
    F(1x1,3x3) is direct convolution (U = g, V the window's taps): the pruned direct baseline's engine."""
    o, dp, u = words_layer(C, K, PK, gating=gating, parallel_in=PC, word_fold=fold, geometry=card, density=0.3)
    plan = plan_engine(o, dp, "winograd")
    eng = LayerEngine(plan, weights=beats(plan, u))
    assert plan.multipliers == dp.rank // fold * PC and EngineOptions.from_json(o.to_json()) == o
    rng = np.random.default_rng(4)
    xs = [np.maximum(random_layer(o, rng)[0], 0), random_layer(o, rng, "min")[0], random_layer(o, rng, "max")[0]]
    got, _ = amaranth_run(eng, [(x, None) for x in xs], seed=3, gaps=0.2, backpressure=0.2)
    model = EngineModel(o, dp, "winograd")
    assert got == [output_beats(o, model.tile_outputs_u(x, u)) for x in xs]
    _, cycles = amaranth_run(eng, [(x, None) for x in xs[:2]])
    assert cycles == [s["last_out"] - s["first"] + 1 for s in schedule(o, plan.timing, 2, (False, False))]
    assert plan.multipliers * o.issues_per_tile < dp.rank * PK * o.kernel_groups * o.C


@pytest.mark.parametrize("extra, words", [
    ({"kernel_mask": "mask"}, "a kernel mask as well"), ({"input_transform": "serial"}, "the serial input transform"),
    ({"kernel_transform": "hw"}, "the kernel transform on chip")])
def test_word_mask_options_it_does_not_take(extra, words):
    o, _, _ = words_layer(3, 4, 4)
    if extra.get("kernel_mask"):
        from hdl.engine.sparsity import KernelMask
        extra = {"kernel_mask": KernelMask.from_array(np.ones((4, 3), bool))}
    with pytest.raises(WinohdlError, match=f"a word-sparse engine .* does not take {words}"):
        EngineOptions(G, 3, 4, (6, 6), (1, 1), **{"parallel_out": 4, **extra}, word_mask=o.word_mask)


def test_word_mask_bad_input_is_one_line():
    o, dp, u = words_layer(3, 4, 4)
    with pytest.raises(WinohdlError, match="the word mask is 4x3, the layer has 4 out x 2 in channels"):
        EngineOptions(G, 2, 4, (6, 6), (1, 1), word_mask=o.word_mask)
    with pytest.raises(WinohdlError, match="not a direct one"):
        plan_engine(o, None, "direct")
    plan = plan_engine(o, dp, "winograd")
    with pytest.raises(WinohdlError, match="generated with its weights"):
        LayerEngine(plan)
    bad = u.copy()
    k, c, r = (int(v) for v in np.argwhere(~o.word_mask.array())[0])
    bad[k, c, r] = dp.u_ranges[r].hi
    with pytest.raises(WinohdlError, match=f"word {r} of kernel \\({k}, {c}\\) is non-zero"):
        word_contents(o, beats(plan, bad), plan.store_width, 0)      # what the engine memory is built from
    with pytest.raises(WinohdlError, match="word_mask must be an object"):
        WordMask.from_json({"words": []})
    for fold, words in ((3, "a word fold of 3 does not divide the 16 words"), (0, "a word fold must be a whole"),
                        (True, "a word fold must be a whole")):
        with pytest.raises(WinohdlError, match=words):
            EngineOptions(G, 3, 4, (6, 6), (1, 1), word_mask=o.word_mask, word_fold=fold)
    with pytest.raises(WinohdlError, match="a word fold .* needs a word mask"):
        EngineOptions(G, 3, 4, (6, 6), (1, 1), word_fold=2)
    with pytest.raises(WinohdlError, match="does not take zero-operand gating with a word fold"):
        EngineOptions(G, 3, 4, (6, 6), (1, 1), word_mask=o.word_mask, word_fold=2, gating="zero-operand")
