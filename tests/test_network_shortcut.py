"""winohdl/network/shortcut.py: a residual add's shortcut FIFO sized from the schedule, on the add's
decision; the residual block streamed back to back at that depth, a whole frame and the data dependence
alone (ResNet-8 on Verilator: bench/shortcut.py)."""

import math
import re
from dataclasses import replace

import pytest

from hdl.network.stages import AddStage
from hdl.network.top import NetworkTop
from winohdl.core.errors import WinohdlError
from winohdl.network.attrs import Conv
from winohdl.network.decision import UnitDecision, decision_from_json, engine_decision
from winohdl.network.graph import Graph, Kind
from winohdl.network.load import load_model
from winohdl.network.passes import decide_smallest
from winohdl.network.shortcut import (engine_plan, graph_terms, released_pixels, shortcut_beats,
                                      with_shortcuts)

from test_network_top import RESIDUAL, frames_of, residual, stream


@pytest.fixture(scope="module")
def block(tmp_path_factory):
    """The residual block on 16 x 16 images of 2 channels, every node its smallest hardware."""
    path = tmp_path_factory.mktemp("block") / "m.py"
    path.write_text(RESIDUAL.replace("{channels}", "2"))
    return decide_smallest(load_model(f"{path}:net", (1, 1, 16, 16)))


def _decisions(graph):
    return {n.name: n.decision for n in graph.nodes if n.decision is not None}


def test_released_pixels_wait_for_the_tile_row_and_with_the_lag_for_the_next_tile():
    """F(2x2,3x3), padding 1, an 8 x 8 map: output rows 0-1 leave once tile (0, 3) has its last input,
    row 2 column 7 (pixel 23); with the serial input transform also tile (1, 0)'s, row 4 column 2 (34)."""
    conv = Conv(1, 1, (3, 3), (1, 1), (1, 1), (1, 1))
    opts = engine_decision(conv, (1, 1, 8, 8), (2, 2)).options
    plain, lagged = released_pixels(opts, False), released_pixels(opts, True)
    assert (plain[23], plain[24], plain[-1]) == (0, 16, 64)
    assert (lagged[34], lagged[35]) == (0, 16)
    assert all(a >= b for a, b in zip(plain, lagged))


def test_the_terms_of_the_block(block):
    """Both engines of the main branch on 16 x 16 (parallel B^T: no lag): its output rows 0-1 need the
    first engine's rows 0-2, its tile row 1, input rows 0-4: the data dependence is 5 rows of 16 pixels.
    The delays at the period and the first engine's next tile row (2 rows) come on top."""
    d = _decisions(block)
    add = next(n for n in block.nodes if n.kind == Kind.ADD)
    convs = [n.name for n in block.nodes if n.kind == Kind.CONV][1:]
    assert not any(engine_plan(d[c]).timing.lag for c in convs)
    period = 1000    # the rule at any period: the delays' pixels at this pace
    terms = graph_terms(block, d, period)[add.name]
    assert terms.data == 5 * 16 and terms.next_rows == 2 * 16
    assert terms.delay == math.ceil(terms.delay_cycles * 16 * 16 / period)
    assert terms.pixels == terms.data + terms.delay + terms.next_rows


def test_the_depth_lives_on_the_add_decision(block, tmp_path):
    """decide_smallest sizes the add's FIFO at its engines' period; network.json keeps it; the hardware
    builds it; it is less than the whole frame."""
    add = next(n for n in block.nodes if n.kind == Kind.ADD)
    frame = math.prod(add.shape[1:])
    assert 2 < add.decision.shortcut < frame
    assert with_shortcuts(block, _decisions(block))[add.name] == add.decision
    again = Graph.from_json(block.to_json())
    assert again.node(add.name).decision == add.decision
    assert add.decision.to_json() == {"lanes": 1, "shortcut": add.decision.shortcut}
    assert shortcut_beats(None, 2, 1, 256) == 512 and shortcut_beats(10, 2, 1, 256) == 22


@pytest.mark.parametrize("make, words", [
    (lambda g, add, conv: g.with_decisions({add.name: UnitDecision(1, 1)}), "a whole number of beats >= 2"),
    (lambda g, add, conv: g.with_decisions({add.name: UnitDecision(1, 513)}), "more than a frame (512)"),
    (lambda g, add, conv: g.with_decisions({n.name: UnitDecision(1, 8) for n in g.nodes
                                            if n.kind == Kind.GLOBAL_AVGPOOL}), "only a residual sum"),
    (lambda g, add, conv: decision_from_json({"lanes": 1, "shortcut": "8"}), "a whole number of beats"),
    (lambda g, add, conv: decision_from_json({"lanes": 1, "fifo": 8}), "a sum's with \"shortcut\""),
], ids=["one_beat", "past_a_frame", "not_a_sum", "text", "unknown_key"])
def test_a_bad_shortcut_is_one_line(block, make, words):
    add = next(n for n in block.nodes if n.kind == Kind.ADD)
    with pytest.raises(WinohdlError, match=re.escape(words)) as err:
        make(block, add, None)
    assert "\n" not in str(err.value)


@pytest.mark.slow(25)
def test_the_sized_fifo_holds_the_period_and_the_data_dependence_does_not(tmp_path):
    """Three images back to back (no gaps, no back-pressure) through the block: at the planned depth as
    fast as with a whole frame and bit-exact; at the data dependence alone (the dropped attempt) slower."""
    stages, images, want = residual(tmp_path, 2, 16)
    add = next(s for s in stages if isinstance(s, AddStage))
    decided = decide_smallest(load_model(f"{tmp_path}/m.py:net", (1, 1, 16, 16)))
    assert add.shortcut_depth == next(n for n in decided.nodes if n.kind == Kind.ADD).decision.shortcut
    data = shortcut_beats(5 * 16, 2, 1, 256)
    assert data < add.shortcut_depth < 512
    three = list(images) + list(images[:1])
    cycles = {}
    for name, depth in (("sized", add.shortcut_depth), ("frame", 512), ("data", data)):
        top = NetworkTop(tuple(replace(s, shortcut_depth=depth) if isinstance(s, AddStage) else s for s in stages))
        got, cycles[name] = stream(top, frames_of(three, stages[0].in_lanes), 3, max_cycles=10_000, cycles=True)
        assert [g[0] for g in got] == [[int(v) for v in ref] for ref in list(want) + list(want[:1])]
    assert cycles["sized"] == cycles["frame"] < cycles["data"]
