"""The width analysis is safe (the model checks every node on every vector) and tight
(for each node an input reaches its lower and its upper bound)."""

import pytest

from hdl.datapath import Datapath
from hdl.model import DatapathModel, RangeViolation
from hdl.options import HardwareOptions
from hdl.widths import Range, bilinear_range, linear_witness, signed_width
from miner.constructive import constructive_card
from sim.stimulus import corner_vectors, random_vectors


@pytest.mark.parametrize("lo, hi, w", [(0, 0, 1), (-1, 0, 1), (0, 1, 2), (-128, 127, 8), (-129, 127, 9),
                                       (-128, 128, 9), (5, 9, 5)])
def test_signed_width(lo, hi, w):
    assert signed_width(lo, hi) == w


def _dp(entry, w=(5, 4)):
    return Datapath(constructive_card(entry.geometry), HardwareOptions.make(*w))


def test_transform_ranges_are_reached(suite_entry):
    dp = _dp(suite_entry)
    g = suite_entry.geometry
    for node, (form, rng) in enumerate(zip(dp.data_graph.forms(), dp.data_node_ranges)):
        for maximise, bound in ((True, rng.hi), (False, rng.lo)):
            d = linear_witness(form, [dp.d_range] * g.n_d, maximise)
            assert dp.data_graph.evaluate_nodes(d)[node] == bound  # the range is reached: not too wide
    for node, (form, rng) in enumerate(zip(dp.kernel_graph.forms(), dp.kernel_node_ranges)):
        for maximise, bound in ((True, rng.hi), (False, rng.lo)):
            k = linear_witness(form, [dp.g_range] * g.n_g, maximise)
            assert dp.kernel_graph.evaluate_nodes(k)[node] == bound


def test_output_transform_ranges_are_reached(suite_entry):
    dp = _dp(suite_entry)
    model = DatapathModel(dp)
    checked = 0
    for i, (rng, wit) in enumerate(zip(dp.output_node_ranges, dp.output_witnesses)):
        if wit is None:
            continue
        (dmax, gmax), (dmin, gmin) = wit
        assert model.trace(dmax, gmax).output_nodes[i] == rng.hi
        assert model.trace(dmin, gmin).output_nodes[i] == rng.lo
        checked += 1
    tight = sum(r.tight for r in dp.output_node_ranges)
    if suite_entry.name != "f2x2x2_3x3x3":
        assert tight == len(dp.output_node_ranges)
    assert checked + sum(1 for w in dp.output_witnesses if w is None) == len(dp.output_node_ranges)


def test_output_width_is_exact_convolution_width(suite_entry):
    dp = _dp(suite_entry, (8, 8))
    n_g = suite_entry.geometry.n_g
    assert dp.y_exact_width == signed_width(-128 * 127 * n_g, 128 * 128 * n_g)


def test_model_checks_every_node(suite_entry):
    dp = _dp(suite_entry)
    model = DatapathModel(dp)
    g = suite_entry.geometry
    for d, k in random_vectors(g.n_d, g.n_g, 5, 4, 10, 0) + corner_vectors(g, 5, 4, 64, 0):
        model.trace(d, k)  # raises RangeViolation if any node escapes its range


def test_a_cut_range_is_caught(suite_entry):
    dp = _dp(suite_entry)
    dp.m_ranges = [Range(r.lo // 2, r.hi // 2) for r in dp.m_ranges]
    g = suite_entry.geometry
    with pytest.raises(RangeViolation):
        for d, k in corner_vectors(g, 5, 4, 16, 0):
            DatapathModel(dp).trace(d, k)


def test_bilinear_enumeration_exact_small_case():
    import numpy as np
    C = np.array([[1, -1], [2, 3]])
    r, _ = bilinear_range(C, Range(-2, 1), Range(-1, 3))
    brute = [d0 * (C[0, 0] * g0 + C[0, 1] * g1) + d1 * (C[1, 0] * g0 + C[1, 1] * g1)
             for d0 in range(-2, 2) for d1 in range(-2, 2) for g0 in range(-1, 4) for g1 in range(-1, 4)]
    assert (r.lo, r.hi) == (min(brute), max(brute))


def test_datapaths_of_one_card_share_no_graph():
    """plan_card remembers its plans; each Datapath edits only its own copies (a mutant generator
    flips an adder in one: a correct Datapath of the same card made after it is unchanged)."""
    from hdl.datapath import plan_card
    from hdl.shiftadd import Adder, Term
    from winohdl.core.suite import BY_NAME
    card, opts = constructive_card(BY_NAME["f2x2_3x3"].geometry), HardwareOptions.make(8, 8)
    first = Datapath(card, opts)
    before = list(first.output_graph.adders)
    a = first.output_graph.adders[0]
    first.output_graph.adders[0] = Adder(a.a, Term(a.b.node, a.b.shift, -a.b.sign))
    second = Datapath(card, opts)
    assert plan_card.cache_info().hits > 0 and second.plan is first.plan
    assert second.output_graph.adders == before != first.output_graph.adders


def test_non_negative_words_give_the_widths_of_their_range():
    # an unsigned 8-bit activation (a trained QuantReLU's) in a 9-bit word: every width from [0, 255], one bit
    # less in each word of V and each product than a signed 9-bit word's, and every range reached
    from hdl.engine.options import EngineOptions
    from winohdl.cards import best_card
    from winohdl.core.geometry import Geometry
    g = Geometry((2, 2), (3, 3), (1, 1), (1, 1))
    signed9, unsigned = (Datapath(best_card(g), HardwareOptions(9, 8, data_values=v))
                         for v in ("signed", "non-negative"))
    assert (unsigned.d_range, signed9.d_range) == (Range(0, 255), Range(-256, 255))
    assert (sum(unsigned.v_widths), sum(signed9.v_widths)) == (161, 176)
    assert (sum(unsigned.m_widths), sum(signed9.m_widths)) == (305, 320)
    for node, (form, rng) in enumerate(zip(unsigned.data_graph.forms(), unsigned.data_node_ranges)):
        for maximise, bound in ((True, rng.hi), (False, rng.lo)):
            d = linear_witness(form, [unsigned.d_range] * g.n_d, maximise)
            assert min(d) >= 0 and unsigned.data_graph.evaluate_nodes(d)[node] == bound
    # written only when non-negative (a folder written before reads as signed)
    assert HardwareOptions.from_json(unsigned.options.to_json()) == unsigned.options
    assert "data_values" not in signed9.options.to_json() and unsigned.options.tag == "w9ux8"
    o = EngineOptions(g, 2, 2, (6, 6), (1, 1), data_width=9, data_values="non-negative")
    assert EngineOptions.from_json(o.to_json()) == o and o.d_range == Range(0, 255) and "_w9ux8" in o.name
