"""The R-versus-cost front: proven points, mutually non-dominated, the known trade-offs."""

from hdl.cost import front_figures
from miner.pareto import dominates, mine_front, tiled_cards
from winohdl.core.card import prove_identity
from winohdl.core.suite import BY_NAME


def _front(name):
    g = BY_NAME[name].geometry
    return g, *mine_front(g, front_figures)


def test_f4_3_front_trades_multiplications_for_adder_bits():
    g, front, cands = _front("f4_3")
    assert [p.rank for p in front] == [6, 8, 12]
    bits = [p.figures[1] for p in front]
    assert bits == sorted(bits, reverse=True)


def test_front_points_are_proven_and_mutually_non_dominated():
    for name in ("f4_3", "f2x2_3x3", "s2_5x5"):
        g, front, cands = _front(name)
        assert front[0].rank == g.lower_bound()
        for p in front:
            prove_identity(g, p.card.BT, p.card.G, p.card.AT)
            assert all(any(r) for r in p.card.BT) and all(any(r) for r in p.card.G)
            assert all(any(row[r] for row in p.card.AT) for r in range(p.rank))
            assert not any(dominates(q.figures, p.figures) for q in cands)
        assert [p.rank for p in front if name == "f2x2_3x3"] in ([], [16, 24, 36])


def test_tiled_cards_reach_the_direct_count():
    g = BY_NAME["f2x2_3x3"].geometry
    assert sorted({c.rank for c in tiled_cards(g)}) == [16, 24, 36]


def test_front_with_a_budget_holds_the_searched_cards_at_the_bound():
    """With a polish budget the bound's points include the card whose points the cost chose
    (F(4,3) at 0, +-1, +-3, infinity: 658 adder bits, depth 11) beside the polished constructive one
    (733, depth 8): both non-dominated, both below the constructive card's 770."""
    from hdl.cost import cost_key
    g = BY_NAME["f4_3"].geometry
    front, cands = mine_front(g, front_figures, cost_key, polish_seconds=5)
    at_bound = sorted(p.figures[1:] for p in front if p.rank == g.lower_bound())
    assert at_bound[0][0] < at_bound[-1][0] < 770 and at_bound[0][1] > at_bound[-1][1]
    assert {p.source for p in front if p.rank == g.lower_bound()} == {"points by cost+polish", "constructive+polish"}
    for p in front:
        prove_identity(g, p.card.BT, p.card.G, p.card.AT)
        assert not any(dominates(q.figures, p.figures) for q in cands)
