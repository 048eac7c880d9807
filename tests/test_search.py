"""Mining: ALS from random starts proves small cards; the search never returns worse than the
constructive optimum; the seed method's mechanics (S-curve rescaling, pruning cap, resume)."""

import numpy as np
import pytest
import torch

from miner.card import AlgorithmCard
from miner.constructive import constructive_card
from miner.costs import cost_key
from miner.errors import WinohdlError
from miner.search import mine_card
from miner.sgd import BilinearNet, SGDConfig, mine_sgd, pick_device, s_curve
from miner.suite import BY_NAME


@pytest.mark.parametrize("name", ["f2_3", "s2_k3_o2", "asym_2x3"])
def test_als_proves_from_random_starts(name):
    g = BY_NAME[name].geometry
    card = mine_card(g, method="als", seed=0, budget=240)  # seed 0 needs ~35 s here
    assert card.rank == g.lower_bound() and card.provenance["method"] == "als"
    assert AlgorithmCard.from_json(card.to_json()) == card  # re-proven on load


def test_search_is_never_worse_than_constructive():
    g = BY_NAME["f3_2"].geometry
    card = mine_card(g, method="search", seed=1, budget=5)
    assert cost_key(card.costs) <= cost_key(constructive_card(g).costs)


def test_s_curve_rescaling_keeps_the_function():
    g = BY_NAME["f2_3"].geometry
    net = BilinearNet(g, 4).double()
    d, k = torch.randn(5, g.n_d, dtype=torch.float64), torch.randn(5, g.n_g, dtype=torch.float64)
    before = net(d, k)
    net.set_scale(s_curve(500, 1000, 8.0))
    assert net.scale == pytest.approx(4.5)
    torch.testing.assert_close(net(d, k), before)
    assert s_curve(0, 100, 8.0) == 1.0 and s_curve(100, 100, 8.0) == 8.0


def test_sgd_resume_after_interruption_gives_a_proven_card(tmp_path):
    g = BY_NAME["f2_3"].geometry
    ckpt = tmp_path / "ck.pt"
    # the interrupted run: 300 steps, no proof attempt yet
    cfg = SGDConfig(rank=4, steps=300, batch=256, snap_every=10**9, checkpoint_every=100, seed=1)
    assert mine_sgd(g, cfg, checkpoint=ckpt, progress=False) is None
    assert torch.load(ckpt, weights_only=False)["step"] == 300
    cfg.steps, cfg.snap_every = 5000, 500
    card = mine_sgd(g, cfg, checkpoint=ckpt, resume=True, progress=False)
    assert card is not None and card.provenance["steps"] > 300
    assert AlgorithmCard.from_json(card.to_json()) == card


@pytest.mark.parametrize("exact_loss", [False, True], ids=["sampled", "exact-loss"])
def test_sgd_proves_f23(exact_loss):
    g = BY_NAME["f2_3"].geometry
    cfg = SGDConfig(rank=4, steps=5000, batch=256, exact_loss=exact_loss, seed=1)
    card = mine_sgd(g, cfg, progress=False)
    assert card is not None and card.rank == 4
    assert card.provenance["method"] == "sgd" and card.provenance["steps"] <= 5000
    assert AlgorithmCard.from_json(card.to_json()) == card


def test_bad_settings():
    g = BY_NAME["f2_3"].geometry
    with pytest.raises(WinohdlError, match="below the proven lower bound 4"):
        mine_card(g, method="als", rank=3)
    if not torch.cuda.is_available():
        with pytest.raises(WinohdlError, match="CUDA is not available"):
            pick_device("cuda")
    with pytest.raises(WinohdlError, match="seconds must be > 0"):
        mine_card(g, method="als", budget=-1)


@pytest.mark.parametrize("name", ["f4_3", "s2_5x5"])
def test_sgd_proves_with_the_article_batch(name):
    g = BY_NAME[name].geometry
    cfg = SGDConfig(rank=g.lower_bound(), steps=6000, seed=0)  # batch 2048, the article's
    card = mine_sgd(g, cfg, progress=False)
    assert card is not None and card.rank == g.lower_bound() and card.provenance["steps"] <= 6000
    assert AlgorithmCard.from_json(card.to_json()) == card
