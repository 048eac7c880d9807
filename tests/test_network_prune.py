"""winohdl/network/prune.py: the masks' exact properties (fraction, N:M, global against per layer), masks
kept through retraining, the pruned checkpoint's round trip, the density carried by the graph into the
plan, the integer model and onnxruntime agreeing on a pruned network, and the bad inputs (one line; through
``winohdl network --weights``: exit 2, nothing written)."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from bad_input_helpers import fingerprint, one_line_error
from winohdl.network import prune as P
from winohdl.network.graph import Graph
from winohdl.network.load import load_model, load_module
from winohdl.network.onnx_export import check_onnxruntime
from winohdl.network.plan import Plans
from winohdl.network.plan_report import text as plan_text
from winohdl.network.quant import quantise_network

GLOBAL, LAYER, NM = P.Method.MAGNITUDE_GLOBAL, P.Method.MAGNITUDE_LAYER, P.Method.NM

MODEL = """
import torch
from torch import nn

def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(8 * 4 * 4, 4)).eval()
"""


def _net() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(8 * 4 * 4, 4)).eval()


def _weights(seed=0) -> dict:
    rng = np.random.default_rng(seed)
    return {"a": rng.normal(size=(8, 4, 3, 3)), "b": 0.1 * rng.normal(size=(4, 128))}


@pytest.mark.parametrize("fraction", [0.0, 0.25, 0.5, 0.8, 0.9, 0.95, 0.999])
def test_magnitude_removes_exactly_the_fraction_and_the_smallest(fraction):
    w = _weights()
    total = sum(v.size for v in w.values())
    glob = P.prune(w, P.Pruning(GLOBAL, fraction))
    assert sum(x.mask.size - x.nonzeros for x in glob.layers) == math.floor(fraction * total)
    kept = np.concatenate([np.abs(w[x.layer])[x.mask] for x in glob.layers])
    gone = np.concatenate([np.abs(w[x.layer])[~x.mask] for x in glob.layers])
    assert gone.size == 0 or gone.max() <= kept.min()             # one threshold over every layer
    layer = P.prune(w, P.Pruning(LAYER, fraction))
    for x in layer.layers:                                         # each layer loses its own share
        assert x.mask.size - x.nonzeros == math.floor(fraction * x.mask.size) and x.shape == w[x.layer].shape
        a = np.abs(w[x.layer])
        assert a[~x.mask].size == 0 or a[~x.mask].max() <= a[x.mask].min()
    if 0.5 <= fraction <= 0.95:   # "b"'s weights are 10x smaller: the global rule takes them first, per layer does not
        assert glob["b"].density < layer["b"].density and glob["a"].density > layer["a"].density


@pytest.mark.parametrize("n,m", [(2, 4), (1, 4), (1, 2), (4, 4), (3, 8)])
def test_nm_keeps_exactly_n_largest_in_each_group_of_m_input_channels(n, m):
    w = _weights(1)
    if 4 % m:
        w = {"b": w["b"]}
    masks = P.prune(w, P.Pruning(NM, n=n, m=m))
    for x in masks.layers:
        a = np.moveaxis(np.abs(w[x.layer]), 1, -1).reshape(-1, m)
        keep = np.moveaxis(x.mask, 1, -1).reshape(-1, m)
        assert np.all(keep.sum(1) == n)
        assert np.all(np.min(np.where(keep, a, np.inf), 1) >= np.max(np.where(keep, -np.inf, a), 1))
    assert masks.pruning.fraction == 1 - n / m and math.isclose(masks.density, n / m)


@pytest.mark.parametrize("fraction", [0.0, 0.5, 0.8, 0.9])
def test_balanced_keeps_as_many_in_every_column_along_the_outputs(fraction):
    """``magnitude-balanced``: each (input, kernel position) column of the K output channels loses its
    floor(fraction x K) smallest, so every column keeps as many (what a word-sparse engine walks in step)."""
    w = _weights(2)
    masks = P.prune(w, P.Pruning(P.Method.MAGNITUDE_BALANCED, fraction))
    for x in masks.layers:
        K = x.shape[0]
        assert np.all(x.mask.sum(axis=0) == K - math.floor(fraction * K))
        a = np.abs(w[x.layer])
        assert np.all(np.min(np.where(x.mask, a, np.inf), 0) >= np.max(np.where(x.mask, -np.inf, a), 0))
    assert P.Pruning.from_json(masks.pruning.to_json()) == masks.pruning


def test_ties_and_apply():
    w = {"a": np.ones((2, 4, 1, 1))}
    masks = P.prune(w, P.Pruning(NM, n=2, m=4))
    assert masks["a"].mask[:, :, 0, 0].tolist() == [[True, True, False, False]] * 2   # ties: the lower channels
    pruned = P.apply(w, masks)
    assert np.count_nonzero(pruned["a"]) == 4 and np.count_nonzero(w["a"]) == 8          # a new array
    with pytest.raises(ValueError):
        masks["a"].mask[0, 0, 0, 0] = False                                             # read-only


def test_masks_stay_applied_through_retraining():
    model = _net().train()
    masks = P.torch_masks(model, P.Pruning(GLOBAL, 0.8))
    opt = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.1)
    for _ in range(3):                         # moments built up dense first: they would move pruned weights
        opt.zero_grad()
        model(torch.randn(8, 4, 8, 8)).square().mean().backward()
        opt.step()
    masks = P.torch_masks(model, P.Pruning(GLOBAL, 0.8))
    with P.keep_applied(model, masks, opt):
        for _ in range(5):
            opt.zero_grad()
            model(torch.randn(8, 4, 8, 8)).square().mean().backward()
            for x in masks.layers:
                grad = dict(model.named_modules())[x.layer].weight.grad.numpy()
                assert np.all(grad[~x.mask] == 0)
            opt.step()
            for name, w in P.torch_weights(model).items():
                assert np.all(w[~masks[name].mask] == 0) and np.all(w[masks[name].mask] != 0)
    assert all(not w._backward_hooks for w in model.parameters())   # the hooks went with the context


def test_checkpoint_round_trip(tmp_path):
    model = _net()
    masks = P.torch_masks(model, P.Pruning(NM, n=2, m=4))
    P.apply_to_module(model, masks)
    P.save_checkpoint(tmp_path / "p.pt", model, masks)
    fresh = _net()
    back = P.load_checkpoint(tmp_path / "p.pt", fresh)
    assert back.pruning == masks.pruning and back.names == masks.names
    assert all(np.array_equal(a.mask, b.mask) for a, b in zip(back.layers, masks.layers))
    assert all(torch.equal(a, b) for a, b in zip(fresh.state_dict().values(), model.state_dict().values()))
    assert [p.name for p in tmp_path.iterdir()] == ["p.pt"]                       # no temporary left


def test_density_on_the_nodes_in_network_json_and_the_plan(tmp_path):
    from winohdl.network import api
    model = _net()
    masks = P.torch_masks(model, P.Pruning(GLOBAL, 0.9))
    P.apply_to_module(model, masks)
    graph = load_module(model, (1, 4, 8, 8))
    counted = {n.name: n.nonzeros for n in graph.nodes if n.nonzeros is not None}
    assert sorted(counted.values()) == sorted(x.nonzeros for x in masks.layers)
    again = Graph.from_json(graph.to_json())                                    # carried without the weights
    assert again == graph and {n.name: n.density for n in again.nodes} == {n.name: n.density for n in graph.nodes}
    plans = api.plan(graph, "LFE5U-25F")
    assert {x.node: x.nonzeros for x in plans.winograd.layers if x.weights} == counted
    assert Plans.from_json(plans.to_json()) == plans
    table = plan_text(plans)
    assert "density" in table
    for x in plans.winograd.layers:
        if x.weights:
            assert f"{100 * x.nonzeros / x.weights:.1f}%" in table
    graph2, masks2 = P.prune_graph(load_module(_net(), (1, 4, 8, 8)), P.Pruning(GLOBAL, 0.9))   # the graph pass
    assert {n.name: n.nonzeros for n in graph2.nodes if n.nonzeros is not None} == counted
    assert sorted(masks2.names) == sorted(counted)


def test_integer_model_and_onnxruntime_agree_on_a_pruned_network():
    model = _net()
    P.apply_to_module(model, P.torch_masks(model, P.Pruning(NM, n=1, m=4)))
    graph = load_module(model, (1, 4, 8, 8))
    x = np.random.default_rng(3).uniform(-1, 1, (16, 4, 8, 8)).astype(np.float32)
    qnet = quantise_network(graph, x, "random")
    assert check_onnxruntime(qnet, x) == []
    w = qnet.layer(next(n.name for n in graph.nodes if n.kind.value == "conv")).weight
    assert np.all(np.count_nonzero(np.moveaxis(w, 1, -1).reshape(-1, 4), 1) <= 1)   # the zeros stay zero in int8


def test_bad_rules_and_masks_are_one_line():
    w = _weights()
    for bad in (1.0, -0.1, 1.5, float("nan"), True, "0.5"):
        one_line_error(lambda: P.Pruning(GLOBAL, bad), "fraction", "[0, 1)")
    for n, m in ((0, 4), (5, 4), (2, 0), (2.0, 4)):
        one_line_error(lambda: P.Pruning(NM, n=n, m=m), "N:M")
    one_line_error(lambda: P.Pruning("random", 0.5), "method")
    one_line_error(lambda: P.prune(w, P.Pruning(NM, n=2, m=3)), "'a'", "input channels (4)", "multiple of 3")
    masks = P.prune(w, P.Pruning(GLOBAL, 0.5))
    one_line_error(lambda: P.apply({"a": w["a"][:4], "b": w["b"]}, masks), "'a'", "[8, 4, 3, 3]", "[4, 4, 3, 3]")
    one_line_error(lambda: P.apply({"b": w["b"]}, masks), "'a'", "does not have")
    one_line_error(lambda: P.LayerMask("a", np.ones((2, 2), dtype=np.int8)), "boolean")
    one_line_error(lambda: P.prune({"a": np.ones(3)}, P.Pruning(GLOBAL, 0.5)), "2 or more axes")
    model = _net()
    one_line_error(lambda: P.apply_to_module(model, masks), "'a'", "the module does not have")


def test_a_checkpoint_that_does_not_fit(tmp_path):
    model = _net()
    masks = P.torch_masks(model, P.Pruning(LAYER, 0.5))
    P.apply_to_module(model, masks)
    P.save_checkpoint(tmp_path / "p.pt", model, masks)
    other = nn.Sequential(nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(6 * 4 * 4, 4))
    before = [t.clone() for t in other.state_dict().values()]
    one_line_error(lambda: P.load_checkpoint(tmp_path / "p.pt", other), "mask of layer '0'", "[8, 4, 3, 3]",
                   "[6, 4, 3, 3]")
    assert all(torch.equal(a, b) for a, b in zip(before, other.state_dict().values()))   # left unchanged
    one_line_error(lambda: P.load_checkpoint(tmp_path / "none.pt", other), "does not exist")
    dense = _net()
    one_line_error(lambda: P.save_checkpoint(tmp_path / "q.pt", dense, masks), "not zero")
    assert not (tmp_path / "q.pt").exists()


def test_network_reads_a_pruned_checkpoint_and_refuses_one_that_does_not_fit(cli, tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    model = _net()
    masks = P.torch_masks(model, P.Pruning(GLOBAL, 0.75))
    P.apply_to_module(model, masks)
    P.save_checkpoint(tmp_path / "p.pt", model, masks)
    graph = load_model(f"{tmp_path}/model.py:net", (1, 4, 8, 8), tmp_path / "p.pt")
    assert sum(n.nonzeros or 0 for n in graph.nodes) == sum(x.nonzeros for x in masks.layers)
    bad = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                        nn.Linear(8 * 4 * 4, 5))
    wrong = P.Masks(masks.pruning, (P.LayerMask("4", np.ones((5, 128), dtype=bool)),))
    P.save_checkpoint(tmp_path / "wrong.pt", bad, wrong)
    torch.save({"format": P.FORMAT, "state_dict": model.state_dict(), "masks": {
        "0": torch.zeros(8, 4, 3, 3, dtype=torch.bool)}, "pruning": masks.pruning.to_json()}, tmp_path / "nz.pt")
    for name, words in (("wrong.pt", ("mask of layer '4'", "[5, 128]", "[4, 128]")),
                        ("nz.pt", ("layer '0'", "not zero"))):
        before = fingerprint(tmp_path)
        code, out, err = cli("network", "--model", f"{tmp_path}/model.py:net", "--input-shape", "1x4x8x8",
                             "--weights", tmp_path / name, "--plan", "smallest", "-o", tmp_path / "out")
        assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("error: "), err
        assert all(w in err for w in words), err
        assert fingerprint(tmp_path) == before


def _script(path: str):
    import importlib.util
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location(f"winohdl_test_{Path(path).parent.name}_prune", root / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script, argv, words", [
    ("digits", ["--fraction", "1"], ("[0, 1)", "density in (0, 1]")),
    ("digits", ["--fraction", "-0.5"], ("[0, 1)",)),
    ("digits", ["--fraction", "nan"], ("[0, 1)",)),
    ("digits", ["--fraction", "abc"], ("--fraction", "invalid float")),
    ("digits", ["--method", "n:m", "--nm", "2:3"], ("2:3 fits no layer of the digits CNN", "0 1, 3 8, 7 256")),
    ("mnist", ["--method", "n:m", "--nm", "1:3", "--domain", "winograd"], ("1:3 fits no layer of the mnist CNN",)),
    ("digits", ["--method", "n:m", "--nm", "5:4"], ("N:M", "5:4")),
    ("digits", ["--method", "n:m", "--nm", "2:\u0664"], ("--nm takes N:M",)),
    ("digits", ["--domain", "fourier"], ("--domain", "invalid choice")),
    ("digits", ["--retrain", "-1"], ("--retrain >= 0",)),
    ("digits", ["-o", "{tmp}/file"], ("exists and is not a folder",)),
], ids=["fraction_1", "negative", "nan", "not_a_number", "nm_fits_no_layer", "nm_winograd_mnist", "n_above_m",
        "nm_not_ascii", "domain", "retrain", "o_is_a_file"])
def test_the_prune_scripts_refuse_bad_input_before_training(script, argv, words, tmp_path, capsys):
    """One line, exit 2, nothing written, and before any training (these take well under a second)."""
    import time
    from bad_input_helpers import fingerprint
    module = _script(f"examples/{script}/prune.py")
    (tmp_path / "file").write_text("x")
    before = fingerprint(tmp_path)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    t0 = time.monotonic()
    try:
        code = module.main(argv + ([] if "-o" in argv else ["-o", str(tmp_path / "out")]))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1, err
    assert all(w in err for w in words), err
    assert fingerprint(tmp_path) == before and time.monotonic() - t0 < 5      # no dense training ran


def test_a_checkpoint_in_the_other_domain_is_refused(cli, tmp_path):
    from bad_input_helpers import fingerprint
    from winohdl.network.winograd_layer import to_winograd
    (tmp_path / "model.py").write_text(MODEL)
    model = to_winograd(_net())
    masks = P.torch_masks(model, P.Pruning(GLOBAL, 0.5, domain=P.Domain.WINOGRAD))
    P.apply_to_module(model, masks)
    P.save_checkpoint(tmp_path / "u.pt", model, masks)
    (tmp_path / "flat.py").write_text(MODEL.replace("nn.Conv2d(4, 8, 3, padding=1)", "nn.Conv2d(4, 8, 3, 2, 1)"))
    before = fingerprint(tmp_path)         # no convolution the Winograd domain takes: refused, nothing written
    code, out, err = cli("network", "--model", f"{tmp_path}/flat.py:net", "--input-shape", "1x4x8x8",
                         "--weights", tmp_path / "u.pt", "--plan", "smallest", "-o", tmp_path / "out")
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("error: "), err
    assert "pruned in the Winograd domain" in err and "to_winograd(model)" in err, err
    assert fingerprint(tmp_path) == before
    one_line_error(lambda: P.load_checkpoint(tmp_path / "u.pt", _net()), "Winograd domain", "to_winograd(model)")
    spatial = _net()
    smasks = P.torch_masks(spatial, P.Pruning(GLOBAL, 0.5))
    P.apply_to_module(spatial, smasks)
    P.save_checkpoint(tmp_path / "g.pt", spatial, smasks)
    one_line_error(lambda: P.load_checkpoint(tmp_path / "g.pt", to_winograd(_net())), "spatial weights",
                   "layer '0' in the Winograd domain")
    wrong = P.Masks(masks.pruning, (P.LayerMask("0", np.ones((8, 4, 36), dtype=bool)),))   # F(4x4)'s R, not 16
    one_line_error(lambda: P.apply_to_module(to_winograd(_net()), wrong), "[8, 4, 36]", "[8, 4, 16]")
