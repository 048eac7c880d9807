"""Generated tiles in Amaranth's simulator: bit-exact against the Python model and torch.

Every suite geometry at widths 4/4, 8/8 and 8/5, both kernel-transform modes and both
pipeline options, on seeded random vectors plus extreme corners.
"""

import itertools

import re
import zlib

import pytest
import torch

from hdl.tile import WinogradTile
from hdl.datapath import Datapath
from hdl.direct import DirectConvolution
from hdl.model import DatapathModel
from hdl.options import HardwareOptions
from miner.constructive import constructive_card
from winohdl.core.reference import reference_conv
from winohdl.core.suite import SUITE
from sim.stimulus import corner_vectors, random_vectors

from hdl_helpers import simulate

WIDTHS = [(4, 4), (8, 8), (8, 5)]
# deep pipelines at 1 and 2 adder levels per stage ("deep1", "deep2")
SETTINGS = [(w, p, k) for w in WIDTHS for p, k in itertools.product(("none", "stages", "deep1"), ("hw", "offline"))]
SETTINGS += [((8, 8), "deep2", "hw"), ((8, 5), "deep3", "offline")]
BIG = {"f4x4_3x3", "f2x2x2_3x3x3"}
# the two large designs run at 8/8 in two settings, to keep the suite fast
CASES = [(e, *s) for e in SUITE for s in SETTINGS
         if e.name not in BIG or (s[0] == (8, 8) and s[1:] in {("none", "hw"), ("stages", "offline")})]


def vectors_for(entry, options, seed):
    g = entry.geometry
    n_random, n_corner = (6, 6) if entry.name in BIG else (16, 24)
    return (random_vectors(g.n_d, g.n_g, options.data_width, options.kernel_width, n_random, seed)
            + corner_vectors(g, options.data_width, options.kernel_width, n_corner, seed))


def torch_y(geometry, vectors):
    d = torch.tensor([v[0] for v in vectors])
    g = torch.tensor([v[1] for v in vectors])
    return reference_conv(geometry, d, g).long().tolist()


@pytest.mark.parametrize("entry, widths, pipeline, kt", CASES,
                         ids=[f"{e.name}-w{w[0]}x{w[1]}-{p}-{k}" for e, w, p, k in CASES])
def test_tile_is_bit_exact(entry, widths, pipeline, kt):
    options = _options(widths, pipeline, kt)
    dp = Datapath(constructive_card(entry.geometry), options)
    check_tile(dp, entry, vectors_for(entry, options, seed=zlib.crc32(entry.name.encode()) % 1000))


def check_tile(dp, entry, vectors):
    """Simulate the tile of ``dp`` on ``vectors``: equal to the bit-exact model and to torch."""
    tile = WinogradTile(dp)

    def drive(ctx, v):
        ctx.set(tile.d, v[0])
        if dp.options.kernel_transform.value == "hw":
            ctx.set(tile.g, v[1])
        else:
            ctx.set(tile.u, dp.host_kernel_transform(v[1]))

    got = simulate(tile, vectors, drive, tile.latency)
    model = DatapathModel(dp)
    assert got == [model(d, g) for d, g in vectors]
    assert got == torch_y(entry.geometry, vectors)


def _options(widths, pipeline, kt="hw", **kw):
    """``deepN``: a deep pipeline with N adder levels per stage."""
    if pipeline.startswith("deep"):
        return HardwareOptions.make(*widths, "deep", kt, adders_per_stage=int(pipeline[4:]), **kw)
    return HardwareOptions.make(*widths, pipeline, kt, **kw)


@pytest.mark.parametrize("entry", [e for e in SUITE if e.name not in BIG], ids=lambda e: e.name)
@pytest.mark.parametrize("per_stage", [1, 2, 3])
def test_deep_latency_is_computed_from_the_graph_depths(entry, per_stage):
    from hdl.components import graph_latency, split_levels
    from hdl.tile import tile_latency
    dp = Datapath(constructive_card(entry.geometry), _options((8, 8), f"deep{per_stage}"))
    ceil = lambda depth: max(0, (depth - 1) // per_stage)  # noqa: E731
    transforms = max(ceil(dp.data_graph.depth), ceil(dp.kernel_graph.depth))
    div = max((graph_latency(x.graph, per_stage) for x in dp.divisions if not x.trivial_odd), default=None)
    split = max(split_levels(v, u) for v, u in zip(dp.v_widths, dp.u_widths))
    # in, transforms, operands (fabric, DSP input), products (DSP pipeline and output, fabric, sums of
    # split products), A^T, ...
    assert tile_latency(dp) == 1 + transforms + 2 + 3 + split + ceil(dp.output_graph.depth) + 1 + (
        0 if div is None else div + 1) + 1


@pytest.mark.parametrize("entry", SUITE, ids=lambda e: e.name)
@pytest.mark.parametrize("kt", ["hw", "offline"])
def test_stages_latency_counts_the_row_column_passes(entry, kt):
    """``stages``: operands, products, A^T rows and y (4), plus one register between consecutive
    passes of a row-column transform (the deeper input transform's, and A^T's); the direct
    baseline's transforms are one pass each, so it stays at 4."""
    from hdl.direct import DirectArithmetic
    from hdl.tile import tile_latency
    dp = Datapath(constructive_card(entry.geometry), _options((8, 8), "stages", kt))
    latency = tile_latency(dp)
    passes = {name: len(set(graph.passes)) for name, graph in
              (("BT", dp.data_graph), ("G", dp.kernel_graph), ("AT", dp.output_graph))}
    inputs = max(passes["BT"], passes["G"] if kt == "hw" else 0)
    assert latency == 4 + max(inputs - 1, 0) + max(passes["AT"] - 1, 0)
    if all(dp.realisation[t] == "flat" for t in ("BT", "G", "AT")):
        assert latency == 4
    assert DirectArithmetic.of(entry.geometry, dp.options).latency == 4


@pytest.mark.parametrize("entry", [e for e in SUITE if e.name not in BIG], ids=lambda e: e.name)
@pytest.mark.parametrize("pipeline", ["none", "stages", "deep1", "deep2"])
def test_direct_baseline_is_bit_exact(entry, pipeline):
    check_direct(entry, _options((6, 5), pipeline), seed=3)


def check_direct(entry, options, seed):
    """Simulate the direct baseline on seeded vectors: equal to torch."""
    dut = DirectConvolution(entry.geometry, options)
    vectors = vectors_for(entry, options, seed=seed)

    def drive(ctx, v):
        ctx.set(dut.d, v[0])
        ctx.set(dut.g, v[1])

    assert simulate(dut, vectors, drive, dut.latency) == torch_y(entry.geometry, vectors)


@pytest.mark.parametrize("rounding", ["truncate", "round-half-up", "round-half-even"])
@pytest.mark.parametrize("pipeline", ["none", "deep1"])
def test_saturating_output_matches_model(rounding, pipeline):
    entry = SUITE[0]
    options = _options((8, 8), pipeline, output_width=10, rounding=rounding, output_shift=3)
    dp = Datapath(constructive_card(entry.geometry), options)
    tile = WinogradTile(dp)
    vectors = vectors_for(entry, options, seed=5)

    def drive(ctx, v):
        ctx.set(tile.d, v[0])
        ctx.set(tile.g, v[1])

    got = simulate(tile, vectors, drive, tile.latency)
    model = DatapathModel(dp)
    assert got == [model(d, g) for d, g in vectors]
    assert any(abs(y) == 512 or y == 511 for row in got for y in row)  # saturation was exercised


# Operands wider than a DSP block's 18 bits: deep pipelines split them into partial products, each
# its own registered multiplier, summed by registered adders (hdl.components.emit_product).
WIDE = [(entry, widths, kt) for entry in (SUITE[2], SUITE[6]) for widths, kt in (((16, 16), "hw"), ((20, 12), "offline"))]


@pytest.mark.parametrize("entry, widths, kt", WIDE, ids=[f"{e.name}-w{w[0]}x{w[1]}-{k}" for e, w, k in WIDE])
def test_deep_tile_with_split_multipliers_is_bit_exact(entry, widths, kt):
    from hdl.components import DSP_OPERAND_BITS
    options = _options(widths, "deep1", kt)
    dp = Datapath(constructive_card(entry.geometry), options)
    assert max(dp.v_widths + dp.u_widths) > DSP_OPERAND_BITS   # the case is split
    check_tile(dp, entry, vectors_for(entry, options, seed=11))


@pytest.mark.parametrize("widths", [(20, 8), (24, 24), (32, 19)])
def test_deep_direct_baseline_with_split_multipliers_is_bit_exact(widths):
    check_direct(SUITE[0], _options(widths, "deep1"), seed=7)


MUL = re.compile(r"cell \$mul .*?\n((?:\s+parameter .*\n)+)")


def multiplier_operand_bits(rtlil: str) -> list[int]:
    """The signed operand widths of every ``$mul`` cell (an unsigned operand counts one bit more)."""
    out = []
    for params in MUL.findall(rtlil):
        p = dict(re.findall(r"parameter \\(\w+) (\S+)", params))
        for side in "AB":
            out.append(int(p[f"{side}_WIDTH"]) + (p[f"{side}_SIGNED"] in ("0", "1'0", "0'")))
    return out


@pytest.mark.parametrize("pipeline, fits", [("deep1", True), ("none", False)])
def test_deep_multipliers_fit_an_18_bit_dsp_operand(pipeline, fits):
    """Every multiplication of a deep design fits an 18 x 18 signed block; combinational designs
    leave wide products whole (the check can fail)."""
    from amaranth.back import rtlil
    from hdl.components import DSP_OPERAND_BITS
    dp = Datapath(constructive_card(SUITE[2].geometry), _options((16, 16), pipeline))
    bits = multiplier_operand_bits(rtlil.convert(WinogradTile(dp), name="t"))
    assert bits and (max(bits) <= DSP_OPERAND_BITS) == fits, bits
    direct = multiplier_operand_bits(rtlil.convert(DirectConvolution(SUITE[2].geometry, _options((24, 8), pipeline)), name="t"))
    assert (max(direct) <= DSP_OPERAND_BITS) == fits, direct


NEGATION = re.compile(r"=\s*-\s*(\$signed|\\|\w)")  # Verilog "x = - y": a negation node (write_verilog's $neg)


@pytest.mark.parametrize("pipeline", ["none", "deep1"])
def test_no_negation_node_anywhere(suite_entry, pipeline):
    if pipeline != "none" and suite_entry.name not in ("f6_3", "f2x2_3x3", "s2_5x5"):
        return  # the deep pipeline adds registers only: three geometries show it keeps the property
    """Subtraction is one subtractor (a - b), never a negation feeding an adder, and no multiplier
    operand is negated: signs are folded into the neighbouring transform."""
    from amaranth.back import verilog
    dp = Datapath(constructive_card(suite_entry.geometry), _options((8, 8), pipeline))
    for graph in (dp.data_graph, dp.kernel_graph, dp.output_graph):
        assert graph.negations == 0
        assert all(t is None or t.sign > 0 for t in graph.outputs)
    text = verilog.convert(WinogradTile(dp), name="t", emit_src=False)
    assert " - " in text or dp.adders["BT"] + dp.adders["AT"] == 0 or "d2_o2x2" in suite_entry.name
    assert not NEGATION.search(text), NEGATION.search(text).group(0)


def test_the_negation_check_can_fail():
    from amaranth.back import verilog
    from amaranth.hdl import Module, Signal, signed
    m = Module()
    a, b, x = Signal(signed(8)), Signal(signed(8)), Signal(signed(10))
    m.d.comb += x.eq(a + (-b))
    assert NEGATION.search(verilog.convert(m, ports=[a, b, x], emit_src=False))


@pytest.mark.parametrize("width", range(2, 41))
def test_operand_chunks_cover_the_word_and_fit_a_block(width):
    """Chunks tile bits 0..width-1 in order; the top one is signed and at most 18 bits, the others
    unsigned and at most 17 (they fit a signed 18-bit block operand); no more chunks than needed."""
    from hdl.components import DSP_OPERAND_BITS, operand_chunks
    chunks = operand_chunks(width)
    assert [c[0] for c in chunks] == [sum(c[1] for c in chunks[:i]) for i in range(len(chunks))]
    assert sum(c[1] for c in chunks) == width
    assert chunks[-1][2] and chunks[-1][1] <= DSP_OPERAND_BITS
    assert all(not s and 1 <= n <= DSP_OPERAND_BITS - 1 for _, n, s in chunks[:-1])
    assert len(chunks) == (1 if width <= 18 else 1 + -(-(width - 18) // 17))
