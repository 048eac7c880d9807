"""The hardware cost: its figures are the generated design's own widths; objectives rank as documented."""

import pytest

from hdl.cost import OBJECTIVES, cost_key, cost_of, make_cost_key
from hdl.datapath import Datapath, dsp_blocks
from hdl.options import HardwareOptions
from miner.constructive import constructive_card
from miner.costs import card_key
from winohdl.core.errors import WinohdlError
from winohdl.core.suite import BY_NAME, SUITE


@pytest.mark.parametrize("name", [e.name for e in SUITE if e.name != "f2x2x2_3x3x3"])
def test_cost_equals_the_widths_of_the_generated_design(name):
    card = constructive_card(BY_NAME[name].geometry)
    for options in (HardwareOptions(), HardwareOptions.make(6, 5, "none", "offline")):
        dp = Datapath(card, options)
        c = cost_of(card, options)
        widths = [r.width for r in dp.data_node_ranges[dp.data_graph.n_inputs:]]
        assert c.adder_bits["BT"] == sum(widths) + sum(
            dp.v_ranges[i].width for i, t in enumerate(dp.data_graph.outputs) if t is not None and t.sign < 0)
        assert c.adder_bits["AT"] >= sum(r.width for r in dp.output_node_ranges[dp.output_graph.n_inputs:])
        assert c.adder_bits["division"] == dp.adders["division"] * dp.y_exact_width * (dp.adders["division"] > 0)
        assert c.operand_widths == tuple(zip(dp.v_widths, dp.u_widths))
        assert c.realisation == dp.realisation and c.division == dp.adders["division"]
        assert c.total_bits == sum(c.adder_bits[k] for k in ("BT", "AT", "division")) + (
            c.adder_bits["G"] if options.kernel_transform.value == "hw" else 0)


def test_dsp_blocks_count_tiles_of_the_family_multiplier():
    assert dsp_blocks(18, 18) == 1 and dsp_blocks(19, 18) == 2 and dsp_blocks(36, 36) == 4
    assert dsp_blocks(25, 18, (25, 18)) == 1 and dsp_blocks(18, 25, (25, 18)) == 1


def test_objectives_rank_their_own_figure_first():
    card = constructive_card(BY_NAME["f4x4_3x3"].geometry)
    c = cost_of(card)
    assert c.key("dsp")[:3] == (c.dsp_blocks(), c.total_bits, c.logic_depth)
    assert c.key("bits")[0] == c.total_bits and c.key("rank")[0] == 36
    assert set(OBJECTIVES) == {"dsp", "bits", "adders", "depth", "rank"}
    with pytest.raises(WinohdlError):
        make_cost_key("speed")


def test_f4x4_targets():
    """B^T + A^T <= 244, data transform <= 144, exact division counted and <= 64 adders."""
    c = cost_of(constructive_card(BY_NAME["f4x4_3x3"].geometry))
    assert c.adders.BT <= 144 and c.adders.BT + c.adders.AT <= 244 and 0 < c.division <= 64


def test_cost_key_needs_the_geometry_and_matches_cost_of():
    card = constructive_card(BY_NAME["f2x2_3x3"].geometry)
    assert card_key(cost_key, card) == cost_of(card).key()
    with pytest.raises(WinohdlError):
        cost_key(card.BT, card.G, card.AT)
