"""The summary ``winohdl flow`` ends with (winohdl/flow_summary.py) and the words of the synthesis
table (synth/report.py), from a report written here: no tool runs (test_synth.py's
test_flow_end_to_end runs the whole flow)."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from hdl.cost import describe_key, make_cost_key
from hdl.design import generate_design
from hdl.options import HardwareOptions
from miner.constructive import constructive_card
from sim.prove.report import Verdict
from synth.report import format_report, zero_notes
from winohdl.cli import build_parser
from winohdl.core.geometry import Geometry
from winohdl.core.suite import BY_NAME
from winohdl.flow_summary import FlowOutcome, family_verdict, summary

ECP5 = "LUT4 + 2 x CCU2C"
XC7 = "LUT1..LUT6 + INV (CARRY4 listed)"


def entry(dsps, logic, ffs, fmax=None, device="LFE5U-85F-CABGA381", formula=ECP5, kinds=None):
    """One design's figures as synth_design reports them."""
    placed = fmax is not None
    f = {"placed": placed, "median_mhz": fmax, "min_mhz": fmax and fmax - 2, "max_mhz": fmax and fmax + 3,
         "target_mhz": [350.0], "seeds": [{"seed": s, "fmax_mhz": fmax} for s in (1, 2, 3)] if placed else []}
    return {"multipliers": dsps, "dsps": dsps, "logic": logic, "logic_formula": formula, "ffs": ffs, "brams": 0,
            "kinds": kinds or {"carry": {"CCU2C": logic // 2}}, "device": device, "fmax": f, "fmax_mhz": fmax,
            "placed": placed, "not_placed": None if placed else "no open place and route", "note": "",
            "verify": {"status": "PASS", "checked": 260, "simulator": "icarus"}}


def report(pipeline_ffs=156) -> dict:
    """The article's geometry: ECP5 placed, xc7 synthesised only, its direct adders in DSP cascades."""
    xc7 = "xc7 (7-series)"
    return {"design": "o2x2_k3x3_s2x2_d1x1", "latency": 4, "latency_direct": 4, "outputs": 4, "seeds": 3,
            "verified": True, "families": {
                "ecp5": {"winograd": entry(25, 746, pipeline_ffs, 89.8), "direct": entry(36, 584, pipeline_ffs, 85.2)},
                "xilinx": {"winograd": entry(25, 347, 0, device=xc7, formula=XC7, kinds={"logic": {"LUT2": 277}}),
                           "direct": entry(36, 0, 0, device=xc7, formula=XC7, kinds={})}}}


def test_verdict_names_every_figure():
    rep = report()
    assert family_verdict("ecp5", rep) == [
        "ecp5, LFE5U-85F-CABGA381",
        "  DSP blocks  25 against 36 (0.69x)",
        "  Fmax        89.8 MHz against 85.2 (1.05x; median of 3 nextpnr seeds each)",
        "  logic       746 against 584 (1.28x; LUT4 + 2 x CCU2C)"]
    assert family_verdict("xilinx", rep)[2] == "  Fmax        none: no open place and route for this family here"


def test_why_a_column_is_zero():
    """xc7's direct logic 0 (adders in the DSP48E1 cascades), FFs 0 (combinational), LUT4 0 (carry chains)."""
    x = report(pipeline_ffs=0)["families"]["xilinx"]
    assert zero_notes("xilinx", x["winograd"], x["direct"]) == [
        "direct logic: Yosys summed the products inside the DSP48E1 blocks (their post-adders chained "
        "PCOUT -> PCIN), so its adders take no LUTs",
        "FFs: --pipeline none is combinational (the Fmax harness's own registers are not counted)"]
    e = report()["families"]["ecp5"]
    assert zero_notes("ecp5", e["winograd"], e["direct"]) == [
        "LUT4: every adder is a CCU2C carry chain (each counted as 2 LUT4 in logic)"]


def test_target_is_said_to_be_nextpnrs_goal():
    text = format_report(report())
    assert "3 nextpnr seeds each, asked for 350 MHz (nextpnr's --freq goal, set above what it reaches)" in text
    assert "target" not in text


@pytest.fixture(scope="module")
def outcome(tmp_path_factory) -> FlowOutcome:
    card = constructive_card(BY_NAME["s2_5x5"].geometry)
    g = generate_design(card, HardwareOptions.make(8, 8, "stages", "hw"))
    folder = tmp_path_factory.mktemp("flow")
    sims = tuple(SimpleNamespace(simulator=s, passed=True, checked=460) for s in ("icarus", "verilator"))
    proofs = tuple(SimpleNamespace(target=t, verdict=Verdict.PROVEN) for t in ("wino", "direct"))
    return FlowOutcome(card, g.design, folder, sims, proofs, report(), folder / "synth" / "synth-1", 123.4)


def test_summary_prints_each_table_once_and_ends_with_the_files(outcome):
    text = summary(outcome)
    lines = text.splitlines()
    assert text.count("ecp5 (LFE5U-85F-CABGA381)") == 1 and text.count("xilinx (xc7 (7-series))") == 1
    assert "pipeline   stages: registers after each transform, at the multiplier operands and products, and at " \
           "the output; latency 4 cycles (direct 4)" in lines
    assert "    Fmax        89.8 MHz against 85.2 (1.05x; median of 3 nextpnr seeds each)" in lines
    assert "post-synthesis simulation PASS on every mapped netlist (the vendor cell models)" in lines
    assert "proved     Winograd tile PROVEN, direct convolution PROVEN (every output equals the convolution for " \
           "every input, symbolically)" in lines
    f, top = outcome.folder, outcome.design.winograd.top
    opened = [line.split()[0] for line in lines[lines.index("open next") + 1:-2]]
    assert opened == [str(f / f"{top}.v"), str(f / "design.txt"), str(f / f"{top}.core"), str(f / "card.json"),
                      str(Path(outcome.synth_folder) / "report.txt")]
    assert lines[-1] == f"total      123 s; everything in {f}/"
    command = "winohdl explore --kernel 3x3 --outputs 2 --stride 2x2 --pipelines all --family ecp5"
    assert lines[-2] == f"compare    every pipeline (none, stages, deep) of this geometry: {command}"
    a = build_parser().parse_args(command.split()[1:])  # a command that runs as written
    assert Geometry.parse(a.outputs, a.kernel, a.stride, a.dilation) == outcome.card.geometry


def test_search_keys_in_words():
    """The search report names each value of the key (was "dsp key 25, 728, 6, 54, 25, 1, 1")."""
    assert describe_key("dsp", (25, 728, 6, 54, 25, 1, 1)) == (
        "multiplier blocks 25, adder bits 728, logic depth 6, adders 54, R 25, max denominator 1, max |constant| 1")
    assert make_cost_key("bits").describe((1, 2, 3, 4, 5, 6, 7)).startswith("adder bits 1, multiplier blocks 2")


def test_make_run_arguments_parse():
    """``make run``'s RUN_ARGS are a valid ``winohdl flow`` command line: the article's geometry, pipelined."""
    import re
    import shlex

    text = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    args = shlex.split(re.search(r"^RUN_ARGS \?= (.*)$", text, re.M).group(1))
    a = build_parser().parse_args(["flow", *args])
    assert (a.output, a.kernel, a.stride, a.pipeline) == ("2x2", "3x3", "2", "stages")
