"""The shipped card library: every card re-proves on load, belongs to the geometry its file names,
is strictly cheaper than the constructive card and widens no multiplier operand."""

from pathlib import Path

import pytest

from hdl.datapath import Datapath
from hdl.options import HardwareOptions
from miner.card import AlgorithmCard
from miner.constructive import constructive_card
from miner.costs import cost_key
from miner.search import LIBRARY, best_known_card

CARDS = sorted(Path(LIBRARY).glob("*.json"))


def test_the_library_is_not_empty():
    assert len(CARDS) >= 4


@pytest.mark.parametrize("path", CARDS, ids=[p.stem for p in CARDS])
def test_library_card(path):
    card = AlgorithmCard.load(path)
    assert card.geometry.name == path.stem
    assert card.rank == card.geometry.lower_bound()
    base = constructive_card(card.geometry)
    assert cost_key(card.costs) < cost_key(base.costs)
    options = HardwareOptions.make(8, 8)
    mine, ref = Datapath(card, options), Datapath(base, options)
    for widths in ("v_widths", "u_widths"):
        assert max(getattr(mine, widths)) <= max(getattr(ref, widths))
        assert sum(getattr(mine, widths)) <= sum(getattr(ref, widths))
    assert best_known_card(card.geometry) == card  # gen and the search pick it up
