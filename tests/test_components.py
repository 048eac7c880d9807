"""Generated tiles in Amaranth's simulator: bit-exact against the Python model and torch.

Every suite geometry at widths 4/4, 8/8 and 8/5, both kernel-transform modes and both
pipeline options, on seeded random vectors plus extreme corners.
"""

import itertools

import pytest
import torch

from hdl.components import WinogradTile
from hdl.datapath import Datapath
from hdl.direct import DirectConvolution
from hdl.model import DatapathModel
from hdl.options import HardwareOptions
from miner.constructive import constructive_card
from miner.reference import reference_conv
from miner.suite import SUITE
from sim.stimulus import corner_vectors, random_vectors

from hdl_helpers import simulate

WIDTHS = [(4, 4), (8, 8), (8, 5)]
SETTINGS = [(w, p, k) for w in WIDTHS for p, k in itertools.product(("none", "stages"), ("hw", "offline"))]
BIG = {"f4x4_3x3", "f2x2x2_3x3x3"}
# the two large designs run at 8/8 in two settings, to keep the suite fast
CASES = [(e, *s) for e in SUITE for s in SETTINGS
         if e.name not in BIG or (s[0] == (8, 8) and s[1:] in {("none", "hw"), ("stages", "offline")})]


def vectors_for(entry, options, seed):
    g = entry.geometry
    n_random, n_corner = (6, 6) if entry.name in BIG else (16, 24)
    return (random_vectors(g, options.data_width, options.kernel_width, n_random, seed)
            + corner_vectors(g, options.data_width, options.kernel_width, n_corner, seed))


def torch_y(geometry, vectors):
    d = torch.tensor([v[0] for v in vectors])
    g = torch.tensor([v[1] for v in vectors])
    return reference_conv(geometry, d, g).long().tolist()


@pytest.mark.parametrize("entry, widths, pipeline, kt", CASES,
                         ids=[f"{e.name}-w{w[0]}x{w[1]}-{p}-{k}" for e, w, p, k in CASES])
def test_tile_is_bit_exact(entry, widths, pipeline, kt):
    options = HardwareOptions.make(*widths, pipeline, kt)
    dp = Datapath(constructive_card(entry.geometry), options)
    model = DatapathModel(dp)
    tile = WinogradTile(dp)
    vectors = vectors_for(entry, options, seed=hash(entry.name) % 1000)

    def drive(ctx, v):
        ctx.set(tile.d, v[0])
        if kt == "hw":
            ctx.set(tile.g, v[1])
        else:
            ctx.set(tile.u, dp.host_kernel_transform(v[1]))

    got = simulate(tile, vectors, drive, options.latency)
    assert got == [model(d, g) for d, g in vectors]
    assert got == torch_y(entry.geometry, vectors)


@pytest.mark.parametrize("entry", [e for e in SUITE if e.name not in BIG], ids=lambda e: e.name)
@pytest.mark.parametrize("pipeline", ["none", "stages"])
def test_direct_baseline_is_bit_exact(entry, pipeline):
    options = HardwareOptions.make(6, 5, pipeline)
    dut = DirectConvolution(entry.geometry, options)
    vectors = vectors_for(entry, options, seed=3)

    def drive(ctx, v):
        ctx.set(dut.d, v[0])
        ctx.set(dut.g, v[1])

    assert simulate(dut, vectors, drive, options.latency) == torch_y(entry.geometry, vectors)


@pytest.mark.parametrize("rounding", ["truncate", "round-half-up", "round-half-even"])
def test_saturating_output_matches_model(rounding):
    entry = SUITE[0]
    options = HardwareOptions.make(8, 8, "none", "hw", output_width=10, rounding=rounding, output_shift=3)
    dp = Datapath(constructive_card(entry.geometry), options)
    tile = WinogradTile(dp)
    vectors = vectors_for(entry, options, seed=5)

    def drive(ctx, v):
        ctx.set(tile.d, v[0])
        ctx.set(tile.g, v[1])

    got = simulate(tile, vectors, drive, 0)
    model = DatapathModel(dp)
    assert got == [model(d, g) for d, g in vectors]
    assert any(abs(y) == 512 or y == 511 for row in got for y in row)  # saturation was exercised
