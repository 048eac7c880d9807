"""Mining: ALS from random starts proves small cards; the search never returns worse than the
constructive optimum; settings are validated before any work; Ctrl-C keeps a proven card."""

import pytest
import torch

from winohdl.core.card import AlgorithmCard
from miner.constructive import constructive_card
from hdl.cost import cost_key
from miner.costs import card_key
from miner.search import Method, MineSettings, mine_card
from winohdl.core.errors import Interrupted, WinohdlError
from miner.sgd import pick_device
from winohdl.core.suite import BY_NAME


@pytest.mark.parametrize("name", ["f2_3", "s2_k3_o2", "asym_2x3"])
def test_als_proves_from_random_starts(name):
    g = BY_NAME[name].geometry
    card = mine_card(g, MineSettings(Method.ALS, seed=0, seconds=240, polish_seconds=0), cost_key)
    assert card.rank == g.lower_bound() and card.provenance["method"] == "als"
    assert AlgorithmCard.from_json(card.to_json()) == card  # re-proven on load


def test_search_is_never_worse_than_constructive():
    g = BY_NAME["f3_2"].geometry
    card = mine_card(g, MineSettings(Method.SEARCH, seed=1, seconds=5, polish_seconds=2), cost_key)
    assert card_key(cost_key, card) <= card_key(cost_key, constructive_card(g))


def test_stop_before_a_proof_is_interrupted():
    g = BY_NAME["f2x2_3x3"].geometry
    with pytest.raises(Interrupted):
        mine_card(g, MineSettings(Method.ALS, seconds=60), cost_key, should_stop=lambda: True)


def test_stop_during_polish_keeps_the_proven_card():
    g = BY_NAME["asym_2x3"].geometry
    calls = []

    def stop_after_proof():  # false until polishing has asked a few times
        calls.append(1)
        return len(calls) > 50

    card = mine_card(g, MineSettings(Method.SEARCH, seconds=2, polish_seconds=60), cost_key,
                     should_stop=stop_after_proof)
    assert card.provenance.get("interrupted") is True
    assert AlgorithmCard.from_json(card.to_json()) == card




def test_bad_settings():
    g = BY_NAME["f2_3"].geometry
    with pytest.raises(WinohdlError, match="below the proven lower bound 4"):
        mine_card(g, MineSettings(Method.ALS, rank=3), cost_key)
    if not torch.cuda.is_available():
        with pytest.raises(WinohdlError, match="CUDA is not available"):
            pick_device("cuda")
    for bad in (-1, 0, float("nan"), float("inf")):
        with pytest.raises(WinohdlError, match="seconds must be a finite number > 0"):
            MineSettings(Method.ALS, seconds=bad)
    with pytest.raises(WinohdlError, match="seed must be >= 0"):
        MineSettings(Method.ALS, seed=-1)
    with pytest.raises(WinohdlError, match="--resume applies to --method sgd only"):
        MineSettings(Method.ALS, resume=True)


def test_zero_and_repeated_terms_are_reduced():
    """A card above the bound with a zero term and a term repeated (parallel B^T and G rows)
    is reduced to the bound, proven, and R is reported truthfully."""
    from fractions import Fraction

    from miner.search import reduce_terms
    from winohdl.core.card import AlgorithmCard
    g = BY_NAME["f2_3"].geometry
    c = constructive_card(g)
    half = Fraction(1, 2)
    BT = [list(r) for r in c.BT] + [[0] * g.n_d, [2 * v for v in c.BT[1]]]
    G = [list(r) for r in c.G] + [list(c.G[0]), list(c.G[1])]
    AT = [list(row) + [1, row[1] * half * half] for row in c.AT]
    AT = [row[:1] + [row[1] * half] + row[2:] for row in AT]  # term 1 split between two parallel terms
    big = AlgorithmCard.build(g, BT, G, AT, {"method": "test"})
    assert big.rank == 6
    small = reduce_terms(big)
    assert small.rank == 4 and small.provenance["reduced"] == {"from_rank": 6, "to_rank": 4}
