"""Real Icarus and Verilator runs of generated designs, bit-exact against torch.

Every suite geometry on both simulators (8/8 bits, combinational, kernel transform in
hardware), plus pipelined / offline / narrow / asymmetric / rounded settings on chosen
geometries, the direct baseline, deliberately broken designs that must fail, and the
one-line errors for a missing simulator or a bad design folder.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hdl.datapath import Datapath
from hdl.design import DesignError, generate_design, generate_from_datapath, open_design, write_design_folder
from hdl.options import HardwareOptions
from hdl.shiftadd import Adder, Term
from hdl.widths import Range
from miner.constructive import constructive_card
from sim.run import run_simulation
from winohdl.core.suite import BY_NAME, SUITE

from artefacts import copy_of, design_folder, mined_card

SIMS = ["icarus", "verilator"]
VECTORS = 60

# (suite name, options) beyond the default 8/8 combinational hw design
EXTRA = [
    ("f2x2_3x3", HardwareOptions.make(8, 5, "stages", "offline")),
    ("f4_3", HardwareOptions.make(4, 4, "stages", "hw")),
    ("s2_5x5", HardwareOptions.make(8, 8, "stages", "hw")),
    ("f6_3", HardwareOptions.make(6, 8, "none", "offline")),
    ("f2_3", HardwareOptions.make(8, 8, "stages", "hw", output_width=12, rounding="round-half-even", output_shift=5)),
]


def make_design(tmp_path, name, options):
    """A private copy of the (cached) design folder, for a test that writes into it."""
    return copy_of(design_folder(name, options), tmp_path / "design")


def simulate(folder, sim, work, vectors=VECTORS, seed=1, target="wino", waves=False, allow_edits=False):
    opened = open_design(folder, allow_edits=allow_edits)
    return run_simulation(opened, sim, work / f"run_{sim}_{target}_{seed}", vectors, seed, waves, target)


@pytest.mark.slow(10)
def test_mined_and_polished_card_passes(tmp_path):
    """A card from random-start ALS, structural snapping and polishing (mixed terms, denominators
    up to 16) goes through the same generator and testbench, on both simulators (mined once)."""
    card = mined_card("f2x2_3x3", "als", seed=0, seconds=60, polish_seconds=5)
    assert card.provenance["method"] == "als"
    folder = write_design_folder(tmp_path / "d", generate_design(card, HardwareOptions.make(8, 8, "stages", "hw")))
    for sim in SIMS:
        assert_pass(simulate(folder, sim, tmp_path, seed=3))


def assert_pass(r):
    assert r.passed, r.line() + f" first mismatches: {r.mismatches[:1]}"


@pytest.mark.parametrize("sim", SIMS)
@pytest.mark.parametrize("name", [e.name for e in SUITE])
def test_suite_design_passes(tmp_path, name, sim):
    r = simulate(design_folder(name, HardwareOptions.make(8, 8)), sim, tmp_path, seed=7)
    assert_pass(r)
    assert r.checked >= VECTORS + 4


@pytest.mark.parametrize("sim", SIMS)
@pytest.mark.parametrize("name, options", EXTRA, ids=[f"{n}-{o.tag}" for n, o in EXTRA])
def test_design_options_pass(tmp_path, name, options, sim):
    r = simulate(design_folder(name, options), sim, tmp_path, seed=3)
    assert_pass(r)


@pytest.mark.parametrize("pipeline", ["none", "stages"])
def test_direct_baseline_passes(tmp_path, pipeline):
    folder = design_folder("s21_3x3", HardwareOptions.make(8, 8, pipeline))
    assert_pass(simulate(folder, "icarus", tmp_path, seed=1, target="direct"))


def _edit_verilog(folder: Path, edit) -> None:
    v = next(folder.glob("wino_*.v"))
    text = v.read_text()
    new = edit(text)
    assert new != text
    v.write_text(new)


def _flip_first_output_adder(dp):
    """The output transform's first adder becomes a subtractor."""
    a = dp.output_graph.adders[0]
    dp.output_graph.adders[0] = Adder(a.a, Term(a.b.node, a.b.shift, -a.b.sign))


def _cut_widest_node(dp):
    """The data transform's widest adder loses its top bit."""
    n_in = dp.data_graph.n_inputs
    i = max(range(n_in, dp.data_graph.n_nodes), key=lambda k: dp.data_node_ranges[k].width)
    w = dp.data_node_ranges[i].width - 1
    dp.data_node_ranges[i] = Range(-(1 << (w - 1)), (1 << (w - 1)) - 1)


@pytest.mark.parametrize("sim", SIMS)
@pytest.mark.parametrize("mutation", [_flip_first_output_adder, _cut_widest_node], ids=["adder-to-subtractor", "width-cut"])
def test_broken_design_is_caught(tmp_path, mutation, sim):
    """The mutant generator's Verilog replaces the right one in a correct folder (a hand edit: --allow-edits)."""
    card, opts = constructive_card(BY_NAME["f2x2_3x3"].geometry), HardwareOptions.make(8, 8)
    folder = make_design(tmp_path, "f2x2_3x3", opts)
    dp = Datapath(card, opts)
    mutation(dp)
    mutant = write_design_folder(tmp_path / "m", generate_from_datapath(dp))
    name = next(folder.glob("wino_*.v")).name
    assert (mutant / name).read_text() != (folder / name).read_text()
    (folder / name).write_text((mutant / name).read_text())
    r = simulate(folder, sim, tmp_path, seed=7, allow_edits=True)
    assert not r.passed
    assert r.mismatches and r.mismatches[0]["expected"] != r.mismatches[0]["got"]
    assert "first mismatch" in r.message


def test_waves_are_dumped(tmp_path):
    r = simulate(design_folder("f2_3", HardwareOptions.make(4, 4, "stages")), "icarus", tmp_path, 5, seed=1, waves=True)
    assert_pass(r)
    assert r.waves and Path(r.waves).stat().st_size > 0


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "winohdl", *args], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).resolve().parent.parent)


def test_missing_simulator_is_one_line(tmp_path):
    folder = make_design(tmp_path, "f2_3", HardwareOptions.make(8, 8))
    env = dict(os.environ, PATH=str(tmp_path))  # a PATH without iverilog
    p = _cli("sim", str(folder), "--sim", "icarus", env=env)
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert "Icarus Verilog is missing" in p.stderr and "apt-get install iverilog" in p.stderr


def test_folder_without_summary(tmp_path):
    p = _cli("sim", str(tmp_path))
    assert p.returncode == 2 and "has no design.json" in p.stderr and "winohdl gen" in p.stderr


def test_edited_verilog_is_refused_then_simulated_with_allow_edits(tmp_path):
    folder = make_design(tmp_path, "f2_3", HardwareOptions.make(8, 8))
    _edit_verilog(folder, lambda t: t.replace("endmodule", "endmodule // hand edit", 1))
    with pytest.raises(DesignError, match="does not match the design's manifest"):
        open_design(folder)
    p = _cli("sim", str(folder), "--sim", "icarus")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--allow-edits" in p.stderr
    p = _cli("sim", str(folder), "--sim", "icarus", "--vectors", "5", "--allow-edits")
    assert p.returncode == 0 and "PASS" in p.stdout and "edited" in p.stderr


def test_an_edit_that_breaks_the_design_fails_with_allow_edits(tmp_path):
    folder = make_design(tmp_path, "f2_3", HardwareOptions.make(8, 8))
    _edit_verilog(folder, lambda t: t.replace(" + ", " - ", 1))
    r = simulate(folder, "icarus", tmp_path, 20, allow_edits=True)
    assert not r.passed and r.mismatches


def test_two_runs_on_one_design_do_not_collide(tmp_path):
    folder = make_design(tmp_path, "f2_3", HardwareOptions.make(8, 8))
    runs = [subprocess.Popen([sys.executable, "-m", "winohdl", "sim", str(folder), "--sim", "icarus",
                              "--vectors", "20", "--seed", str(s)], cwd=Path(__file__).resolve().parent.parent,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for s in (1, 2)]
    outs = [p.communicate() for p in runs]
    assert [p.returncode for p in runs] == [0, 0], outs
    assert all("PASS" in out for out, _ in outs)
    assert len(list((folder / "sim_build").iterdir())) == 2


def test_unknown_simulator(tmp_path):
    folder = make_design(tmp_path, "f2_3", HardwareOptions.make(8, 8))
    p = _cli("sim", str(folder), "--sim", "modelsim")
    assert p.returncode == 2 and "invalid choice: 'modelsim'" in p.stderr
