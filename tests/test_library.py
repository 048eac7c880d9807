"""The card library: a card placed there is re-proven on load and preferred by gen and the search
when it is cheaper; a tampered one is refused with a one-line error."""

import json

import pytest

import miner.search as search
from winohdl.core.card import CardError
from miner.constructive import constructive_card
from hdl.cost import cost_key
from miner.costs import card_key
from winohdl.core.suite import BY_NAME
from miner.terms import polish


def test_the_shipped_card_is_cheaper_and_preferred():
    """cards/o4_k3_s1_d1.json (F(4,3), bench/cost.py's evidence in cards/README.md) beats the constructive card."""
    g = BY_NAME["f4_3"].geometry
    shipped = search.library_card(g)
    assert shipped is not None and shipped.rank == g.lower_bound()
    assert card_key(cost_key, shipped) < card_key(cost_key, constructive_card(g))
    assert search.best_known_card(g, cost_key) == shipped


def test_a_cheaper_library_card_is_preferred(tmp_path, monkeypatch):
    g = BY_NAME["f4_3"].geometry
    cheaper = search.library_card(g)
    cheaper.save(tmp_path / f"{g.name}.json")
    monkeypatch.setattr(search, "LIBRARY", tmp_path)
    assert search.best_known_card(g, cost_key) == cheaper
    assert search.best_known_card(BY_NAME["f2_3"].geometry, cost_key) == constructive_card(BY_NAME["f2_3"].geometry)
    (tmp_path / f"{g.name}.json").unlink()  # without the card: the constructive one
    assert search.best_known_card(g, cost_key) == constructive_card(g)


def test_polish_keeps_only_a_strictly_cheaper_card():
    g = BY_NAME["f2x2_3x3"].geometry
    base = constructive_card(g)
    polished = polish(base, cost_key, budget=2)
    assert card_key(cost_key, polished) <= card_key(cost_key, base)


def test_a_tampered_library_card_is_refused(tmp_path, monkeypatch):
    g = BY_NAME["f2_3"].geometry
    data = constructive_card(g).to_json()
    data["AT"][0][0] = "2"
    (tmp_path / f"{g.name}.json").write_text(json.dumps(data))
    monkeypatch.setattr(search, "LIBRARY", tmp_path)
    with pytest.raises(CardError):
        search.best_known_card(g, cost_key)
