import copy
import json

import pytest

from winohdl.core.card import AlgorithmCard, CardError
from miner.constructive import constructive_card
from winohdl.core.suite import BY_NAME


@pytest.fixture
def f23():
    return constructive_card(BY_NAME["f2_3"].geometry)


def test_round_trip_json_and_file(tmp_path, f23):
    path = f23.save(tmp_path / "sub" / "card.json")
    again = AlgorithmCard.load(path)
    assert again == f23
    data = json.loads(path.read_text())
    assert data["format"] == "winohdl-card/1" and data["rank"] == 4 and data["proof"]["exact"] is True
    assert all(isinstance(v, str) for row in data["G"] for v in row)
    assert [p.name for p in path.parent.iterdir()] == ["card.json"]  # no temp file left


def test_tampered_entry_is_named(f23):
    data = f23.to_json()
    data["AT"][0][1] = "2"
    with pytest.raises(CardError, match=r"identity fails at y=0, d=1, g=0"):
        AlgorithmCard.from_json(data)


@pytest.mark.parametrize("mutate, words", [
    (lambda d: d["BT"].pop(), "BT must have 4 rows"),
    (lambda d: d["G"][0].append("1"), "G row 0 must have 3 entries"),
    (lambda d: d["AT"][1].__setitem__(0, "one"), r"AT\[1\]\[0\]: expected a rational"),
    (lambda d: d["AT"][1].__setitem__(0, "1/0"), "zero denominator"),
    (lambda d: d["AT"][1].__setitem__(0, 0.5), "expected a rational"),
    (lambda d: d.__setitem__("format", "other"), "unknown card format"),
    (lambda d: d.__setitem__("rank", "4"), "rank must be a positive integer"),
    (lambda d: d["geometry"].__setitem__("kernel", [0]), "kernel must be >= 1"),
    (lambda d: d.__setitem__("lower_bound", 3), "claims lower bound 3"),
    (lambda d: d.pop("G"), "no G matrix"),
])
def test_malformed_card_rejected(f23, mutate, words):
    data = copy.deepcopy(f23.to_json())
    mutate(data)
    with pytest.raises(CardError, match=words):
        AlgorithmCard.from_json(data)


def test_not_json(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{not json")
    with pytest.raises(CardError, match="not valid JSON"):
        AlgorithmCard.load(p)


def test_rank_below_bound_refused():
    card = constructive_card(BY_NAME["f2_3"].geometry)
    with pytest.raises(CardError, match="below the proven lower bound"):
        AlgorithmCard.build(card.geometry, card.BT[:3], card.G[:3], [r[:3] for r in card.AT])


def test_3d_card_is_reproven_on_load():
    card = constructive_card(BY_NAME["f2x2x2_3x3x3"].geometry)
    again = AlgorithmCard.from_json(card.to_json())  # its time is a benchmark figure, not a test
    assert again.entries_checked == 13824 and again == card


def test_stored_costs_are_never_read(f23):
    data = f23.to_json({"adders": {"BT": 0, "G": 0, "AT": 0}})
    data["costs"] = {"adders": 5}
    again = AlgorithmCard.from_json(data)
    assert again == f23 and not hasattr(again, "costs")


def test_content_hash_ignores_provenance(f23):
    other = AlgorithmCard.build(f23.geometry, f23.BT, f23.G, f23.AT, {"method": "elsewhere"})
    assert other.content_hash() == f23.content_hash()
    BT = [list(r) for r in f23.BT]
    G = [list(r) for r in f23.G]
    BT[0] = [2 * v for v in BT[0]]
    G[0] = [v / 2 for v in G[0]]
    assert AlgorithmCard.build(f23.geometry, BT, G, f23.AT).content_hash() != f23.content_hash()


def test_large_values_fall_back_to_python_integers(f23):
    # scale one term by 2^40 in B^T and 2^-40 in G: still exact, int64 bound exceeded
    BT = [list(r) for r in f23.BT]
    G = [list(r) for r in f23.G]
    BT[1] = [v * 2**40 for v in BT[1]]
    G[1] = [v / 2**40 for v in G[1]]
    AT = [[v * 2**30 if r == 1 else v for r, v in enumerate(row)] for row in f23.AT]
    G[1] = [v / 2**30 for v in G[1]]
    assert AlgorithmCard.build(f23.geometry, BT, G, AT).rank == 4
