"""Row-column realisation: the same integer matrix as the flat graph, fewer adders where it counts,
bit-exact through the model on every suite geometry and through Icarus and Verilator on a sample."""

import itertools

import numpy as np
import pytest

from hdl.datapath import Datapath
from hdl.design import open_design
from hdl.model import DatapathModel
from hdl.options import HardwareOptions
from hdl.rowcol import candidates, column_separable, rank_one, row_separable
from hdl.scaling import scale_card
from miner.constructive import constructive_card
from winohdl.core.suite import BY_NAME, SUITE

from artefacts import design_folder


def _evaluate(graph, M, rng):
    for _ in range(4):
        x = rng.integers(-1000, 1000, len(M[0])).tolist()
        assert graph.evaluate(x) == (np.array(M, dtype=object) @ np.array(x, dtype=object)).tolist()


def test_rank_one_finds_integer_factors():
    assert rank_one([2, -4, 6, 3, -6, 9], (2, 3)) == (1, [(2, 3), (1, -2, 3)])
    assert rank_one([-4, 8], (1, 2)) == (-4, [(1,), (1, -2)])
    assert rank_one([1, 0, 0, 1], (2, 2)) is None  # rank two
    assert rank_one([0, 0], (1, 2)) is None


@pytest.mark.parametrize("name", [e.name for e in SUITE if len(e.geometry.output) > 1])
def test_every_row_column_graph_computes_the_matrix(name):
    g = BY_NAME[name].geometry
    s = scale_card(constructive_card(g))
    rng = np.random.default_rng(0)
    for M, dims, side in ((s.BT, g.input, "in"), (s.G, g.kernel, "in"), (s.AT, g.output, "out")):
        found = candidates(M, dims, side)
        assert found[0][0] == "flat" and len(found) == 1 + len(list(itertools.permutations(dims)))
        for _, graph in found:
            _evaluate(graph, M, rng)


@pytest.mark.parametrize("name", [e.name for e in SUITE if len(e.geometry.output) > 1])
def test_row_column_graphs_record_their_passes(name):
    """``stages`` cuts a row-column graph between its 1D passes: every adder is in the stage of the
    pass that built it, its operands in that stage or earlier; a flat graph is one stage."""
    g = BY_NAME[name].geometry
    s = scale_card(constructive_card(g))
    for M, dims, side in ((s.BT, g.input, "in"), (s.G, g.kernel, "in"), (s.AT, g.output, "out")):
        for kind, graph in candidates(M, dims, side):
            stages = graph.pass_stages()
            if kind == "flat":
                assert graph.passes == [] and set(stages) == {0}
                continue
            assert len(graph.passes) == len(graph.adders)
            assert sorted(set(stages[graph.n_inputs:])) == list(range(len(set(graph.passes))))
            assert len(set(graph.passes)) <= len(dims)
            for i, add in enumerate(graph.adders):
                node = graph.n_inputs + i
                assert stages[add.a.node] <= stages[node] and stages[add.b.node] <= stages[node]


def test_f4x4_row_column_beats_flat():
    """Kronecker of the 6x6 data transform: 12 slices x 12 adders = 144 row-column, 169 flat."""
    g = BY_NAME["f4x4_3x3"].geometry
    dp = Datapath(constructive_card(g), HardwareOptions())
    assert dp.realisation == {"BT": "row-column", "G": "row-column", "AT": "row-column"}
    assert dp.adders["BT"] <= 144 and dp.adders["BT"] + dp.adders["AT"] <= 244
    assert dp.adders["division"] <= 64
    s = dp.scaled
    assert candidates(s.BT, g.input, "in")[0][1].adder_count > dp.adders["BT"]


def test_row_order_and_partial_products_are_handled():
    # rows a Kronecker product in a shuffled order, one row twice with a factor 3
    A, B = [[1, 1, 0], [0, 1, -1]], [[1, 2], [1, -1]]
    M = [[a * b for a in ra for b in rb] for ra in A for rb in B]
    M = [M[2], M[0], [3 * v for v in M[3]], M[1]]
    rng = np.random.default_rng(1)
    for order in ((0, 1), (1, 0)):
        _evaluate(row_separable(M, (3, 2), order), M, rng)
    MT = [list(r) for r in zip(*M)]  # columns rank one over the output dims
    for order in ((0, 1), (1, 0)):
        _evaluate(column_separable(MT, (3, 2), order), MT, rng)
    assert row_separable([[1, 0, 0, 1]], (2, 2), (0, 1)) is None


def test_a_row_and_its_negation_share_their_adders():
    """A row -c f1 (x) f2 is the graph of c f1 (x) f2 with a negated output (the generator folds the
    sign into the next transform), not a second set of last-pass adders."""
    A, B = [[1, 1, 0], [0, 1, -1]], [[1, 2], [1, -1]]
    M = [[a * b for a in ra for b in rb] for ra in A for rb in B]
    with_negation = M + [[-v for v in M[1]]]
    rng = np.random.default_rng(2)
    for order in ((0, 1), (1, 0)):
        plain, graph = row_separable(M, (3, 2), order), row_separable(with_negation, (3, 2), order)
        _evaluate(graph, with_negation, rng)
        assert (len(graph.adders), graph.negations) == (len(plain.adders), 1)
        neg = graph.outputs[4]
        assert (neg.node, neg.shift, neg.sign) == (graph.outputs[1].node, graph.outputs[1].shift, -1)


def test_f2x2_kernel_transform_is_row_column_once_signs_fold():
    """The constructive F(2x2,3x3) G has rows -(f1 (x) f2): row-column with the signs folded into A^T
    needs fewer adder bits than the flat graph of the same matrix (215 against 234)."""
    g = BY_NAME["f2x2_3x3"].geometry
    dp = Datapath(constructive_card(g), HardwareOptions())
    flat = candidates(dp.scaled.G, g.kernel, "in")[0][1]
    flat_bits = sum(r.width for r in _ranges(flat, dp))
    assert dp.realisation["G"] == "row-column"
    assert all(t.sign > 0 for t in dp.kernel_graph.outputs if t is not None)
    assert (dp.adder_bits["G"], flat_bits) == (215, 234)


def _ranges(graph, dp):
    from hdl.widths import linear_range
    return [linear_range(f, [dp.g_range] * graph.n_inputs) for f in graph.forms()][graph.n_inputs:]


@pytest.mark.parametrize("name", [e.name for e in SUITE])
def test_model_is_bit_exact_on_every_suite_geometry(name):
    g = BY_NAME[name].geometry
    card = constructive_card(g)
    rng = np.random.default_rng(3)
    for options in (HardwareOptions.make(8, 8), HardwareOptions.make(5, 6, "none", "offline")):
        dp = Datapath(card, options)
        model = DatapathModel(dp)
        T = g.tensor()
        lo, hi = dp.d_range, dp.g_range
        corners = [([lo.lo] * g.n_d, [lo.lo] * g.n_g), ([lo.hi] * g.n_d, [hi.lo] * g.n_g)]
        for d, k in corners + [(rng.integers(lo.lo, lo.hi + 1, g.n_d).tolist(),
                                rng.integers(hi.lo, hi.hi + 1, g.n_g).tolist()) for _ in range(20)]:
            want = np.einsum("ydg,d,g->y", T.astype(object), np.array(d, dtype=object), np.array(k, dtype=object))
            if options.kernel_transform.value == "hw":
                assert model(d, g=k) == want.tolist()
            else:
                assert model(d, u=dp.host_kernel_transform(k)) == want.tolist()


@pytest.mark.parametrize("sim", ["icarus", "verilator"])
@pytest.mark.parametrize("pipeline", ["deep", "stages"])
@pytest.mark.slow(7)
def test_row_column_design_passes_both_simulators(tmp_path, sim, pipeline):
    from sim.run import run_simulation
    opened = open_design(design_folder("f2x2x2_3x3x3", HardwareOptions.make(8, 8, pipeline, "hw")))
    assert dict(opened.design.realisation)["BT"] == "row-column"
    r = run_simulation(opened, sim, tmp_path / f"run_{sim}", 30, 5)
    assert r.passed, r.line()
