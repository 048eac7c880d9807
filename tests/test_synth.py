"""Synthesis: the logic formula and cell kinds on stored Yosys output, the ECP5 DSP register pass on
hand-made netlists, the Fmax statistics, a smoke test per family (DSPs = R where the operands fit a
DSP), place and route over seeds, "not placed" shown as such, the ASIC estimate, the command line's
checks, and the end-to-end flow on one geometry."""

import json
import re
from pathlib import Path

import pytest

from hdl.design import open_design
from hdl.options import HardwareOptions
from synth.nextpnr_report import parse_critical_path, parse_fmax
from synth.passes.ecp5_dsp import absorb_ecp5_dsp_registers
from synth.pnr import FmaxResult, measure_fmax
from synth.report import format_report, synth_design
from synth.families import FAMILY_SPECS
from synth.yosys import parse_stat
from winohdl import cli as winohdl
from winohdl.core.device import FAMILY_DEVICES, FPGA_FAMILIES
from winohdl.core.errors import WinohdlError
from winohdl.core.netlist import PORT, YosysNetlist, edit_netlist

from artefacts import copy_of, design_folder, design_synthesis, synth_report
from hdl_helpers import netlist_cells, trellis_ff, write_netlist

DATA = Path(__file__).parent / "data"


# ---- figures from stored tool output -------------------------------------------------------------

def test_parse_stored_yosys_stat():
    cells = parse_stat(DATA / "yosys_stat_ecp5.json")
    assert cells["MULT18X18D"] == 6 and cells["LUT4"] == 257 and cells["CCU2C"] == 259
    assert "$scopeinfo" not in cells  # an annotation, not a cell


def test_ecp5_logic_formula_on_stored_stat():
    """LUT4 + 2 x CCU2C: the stored netlist has 257 LUT4 and 259 CCU2C (each two LUT4s with carry)."""
    cells = parse_stat(DATA / "yosys_stat_ecp5.json")
    assert FAMILY_DEVICES["ecp5"].logic_count(cells) == 257 + 2 * 259 == 775
    assert FAMILY_SPECS["ecp5"].formula == "LUT4 + 2 x CCU2C"
    kinds = FAMILY_DEVICES["ecp5"].cells_by_kind(cells)
    assert kinds == {"logic": {"LUT4": 257}, "carry": {"CCU2C": 259}, "mux": {"L6MUX21": 10, "PFUMX": 24},
                     "dsp": {"MULT18X18D": 6}}


@pytest.mark.parametrize("family, cells, logic, kinds", [
    # xc7: INV and LUT1 are LUTs too; CARRY4 and MUXF7 listed, not counted
    ("xilinx", {"LUT1": 3, "LUT6": 10, "INV": 2, "CARRY4": 5, "MUXF7": 1, "FDRE": 7, "DSP48E1": 4, "RAMB18E1": 1},
     15, {"carry": 5, "mux": 1, "ff": 7, "dsp": 4, "bram": 1}),
    # iCE40: SB_CARRY rides in the LUT's logic cell
    ("ice40", {"SB_LUT4": 20, "SB_CARRY": 9, "SB_DFF": 3, "SB_DFFSR": 1, "SB_MAC16": 2, "SB_RAM40_4K": 1},
     20, {"carry": 9, "ff": 4, "dsp": 2, "bram": 1}),
    # Gowin: an ALU is a LUT4 in carry mode
    ("gowin", {"LUT2": 1, "LUT4": 4, "ALU": 6, "MUX2_LUT5": 1, "DFF": 2, "DFFR": 1, "MULT18X18": 3, "VCC": 1},
     11, {"carry": 6, "mux": 1, "ff": 3, "dsp": 3}),
])
def test_logic_formula_per_family(family, cells, logic, kinds):
    assert FAMILY_DEVICES[family].logic_count(cells) == logic
    got = FAMILY_DEVICES[family].cells_by_kind(cells)
    for kind, n in kinds.items():
        assert sum(got[kind].values()) == n, (kind, got)
    assert "other" not in got


def test_parse_stored_nextpnr_report():
    assert parse_fmax(DATA / "nextpnr_report_ecp5.json") == pytest.approx(32.0636, abs=1e-3)


def test_critical_path_of_a_stored_nextpnr_report():
    """A real report (a layer engine's harness, seed 1): the path that set the Fmax, its delay split."""
    report = DATA / "nextpnr_report_ecp5_paths.json"
    cp = parse_critical_path(report)
    assert (cp.start, cp.end) == ("engine.fm_bank_2_c0.0.0", "engine.d0_3_ram_TRELLIS_FF_Q_2")
    assert cp.clock_to_out_ns == pytest.approx(5.83, abs=1e-6)
    assert cp.routing_ns == pytest.approx(3.258, abs=1e-6)
    assert cp.logic_ns == 0 and cp.setup_ns == 0
    assert 1000 / cp.total_ns == pytest.approx(parse_fmax(report), rel=1e-6)
    assert "5.83" in cp.line() and "fm_bank_2_c0" in cp.line()
    assert parse_critical_path(DATA / "nextpnr_report_ecp5.json") is None  # a report without paths


def test_critical_path_leaves_out_pin_paths(tmp_path):
    data = json.loads((DATA / "nextpnr_report_ecp5_paths.json").read_text())
    pin = next(cp for cp in data["critical_paths"] if cp["from"] == "<async>")
    pin["path"][1]["delay"] = 50.0  # a pin path slower than every clocked one does not set Fmax
    (tmp_path / "r.json").write_text(json.dumps(data))
    assert parse_critical_path(tmp_path / "r.json").total_ns == pytest.approx(9.088, abs=1e-3)
    data["critical_paths"] = [pin]
    (tmp_path / "r.json").write_text(json.dumps(data))
    assert parse_critical_path(tmp_path / "r.json") is None


def test_malformed_stat_is_one_line(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"modules": {}}))
    with pytest.raises(WinohdlError, match="not a Yosys 'stat -json' report"):
        parse_stat(p)


def test_fmax_statistics():
    r = FmaxResult(seeds=[{"seed": s, "target_mhz": 350, "fmax_mhz": f, "seconds": 1.0}
                          for s, f in ((1, 210.0), (2, 190.0), (3, 230.0))])
    j = r.to_json()
    assert j["placed"] and j["median_mhz"] == 210.0 and (j["min_mhz"], j["max_mhz"]) == (190.0, 230.0)
    assert j["target_mhz"] == [350]
    bad = FmaxResult(reason="ran past the limit")
    assert not bad.placed and bad.median is None and bad.to_json()["median_mhz"] is None


# ---- the ECP5 DSP register pass on hand-made netlists -----------------------------------------

def _ff(d, q, clk=2, **params):
    return trellis_ff(d, q, clk, **params)


def _netlist(tmp_path, a_ff_params=None, extra_load=False, p_levels=2):
    """x (bit 10) -> FF -> A0..A17 (sign-extended), y (bit 11) -> FF -> B0..B17; P0 -> p_levels FFs -> out."""
    cells = {"fa": _ff(10, 20, **(a_ff_params or {})), "fb": _ff(11, 21)}
    mult = {"type": "MULT18X18D", "parameters": {},
            "port_directions": {**{f"A{i}": "input" for i in range(18)}, **{f"B{i}": "input" for i in range(18)},
                                **{f"P{i}": "output" for i in range(36)}},
            "connections": {**{f"A{i}": [20] for i in range(18)}, **{f"B{i}": [21] for i in range(18)},
                            "P0": [30], **{f"P{i}": [100 + i] for i in range(1, 36)}}}
    cells["m"] = mult
    prev = 30
    for lvl in range(p_levels):
        cells[f"p{lvl}"] = _ff(prev, 40 + lvl)
        prev = 40 + lvl
    if extra_load:
        cells["lut"] = {"type": "LUT4", "parameters": {}, "port_directions": {"A": "input", "Z": "output"},
                        "connections": {"A": [20], "Z": [50]}}
    ports = {"clk": {"direction": "input", "bits": [2]}, "x": {"direction": "input", "bits": [10]},
             "y": {"direction": "input", "bits": [11]}, "out": {"direction": "output", "bits": [prev]}}
    return write_netlist(tmp_path, ports, cells)


def _absorb(path):
    """The pass on the netlist file: loaded once, written back once; its summary."""
    return edit_netlist(path, absorb_ecp5_dsp_registers)[1]


def test_dsp_registers_absorbed(tmp_path):
    n = _netlist(tmp_path)
    s = _absorb(n)
    assert s == {"dsps": 1, "inputs": 1, "pipeline": 1, "output": 1, "ffs_removed": 4}
    cells = netlist_cells(n)
    assert set(cells) == {"m"}
    m = cells["m"]
    assert m["connections"]["A17"] == [10] and m["connections"]["B0"] == [11]  # the FFs' D nets
    assert m["connections"]["P0"] == [41]  # drives the output port directly
    assert m["connections"]["CLK0"] == [2] and m["connections"]["CE0"] == ["1"] and m["connections"]["RST0"] == ["0"]
    for r in ("INPUTA", "INPUTB", "PIPELINE", "OUTPUT"):
        assert m["parameters"][f"REG_{r}_CLK"] == "CLK0"


def test_dsp_one_product_register_is_the_output_register(tmp_path):
    n = _netlist(tmp_path, p_levels=1)
    _absorb(n)
    p = netlist_cells(n)["m"]["parameters"]
    assert p["REG_OUTPUT_CLK"] == "CLK0" and "REG_PIPELINE_CLK" not in p


@pytest.mark.parametrize("params", [{"CEMUX": "CE"}, {"GSR": "ENABLED"}, {"REGSET": "SET"}, {"CLKMUX": "INV"}])
def test_dsp_inputs_not_absorbed_from_other_flip_flops(tmp_path, params):
    """An enable, GSR, a set value or an inverted clock: not a plain register, so A stays outside (and B
    with it: nextpnr times a block with one registered input as unregistered)."""
    n = _netlist(tmp_path, a_ff_params=params)
    s = _absorb(n)
    assert s["inputs"] == 0 and s["output"] == 1
    cells = netlist_cells(n)
    assert "fa" in cells and "fb" in cells and "REG_INPUTA_CLK" not in cells["m"]["parameters"]


def test_dsp_shared_operand_register_is_kept(tmp_path):
    """A's flip-flop also drives a LUT: the block registers its own copy, the fabric FF stays for the LUT."""
    n = _netlist(tmp_path, extra_load=True)
    s = _absorb(n)
    cells = netlist_cells(n)
    assert s["inputs"] == 1 and "fa" in cells and "fb" not in cells
    assert cells["m"]["connections"]["A0"] == [10]


# ---- real tools -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def f23_design():
    folder = design_folder("f2_3", HardwareOptions.make(8, 8, "stages"))
    return folder, open_design(folder).design


@pytest.fixture(scope="module")
def f23_small_deep():
    folder = design_folder("f2_3", HardwareOptions.make(4, 4, "deep"))
    return folder, open_design(folder).design


@pytest.fixture(scope="module")
def deep_report(f23_small_deep):
    """One synthesis report of the small deep design on ECP5 (the mapped netlists, place and route
    over two seeds, on two processes) and the ASIC estimate, made once for the tests below: (report,
    its folder)."""
    folder, _ = f23_small_deep
    work = synth_report(folder, ["ecp5", "asic"], seeds=2)
    return json.loads((work / "report.json").read_text()), work


@pytest.mark.parametrize("family", FPGA_FAMILIES)
@pytest.mark.slow(10)
def test_dsps_equal_rank(f23_design, family):
    folder, design = f23_design
    r = design_synthesis(folder, family)
    w, d = r["wino"], r["direct"]
    assert w.dsps == design.rank == 4  # 9-10 bit operands: one multiplier per DSP block
    if family == "ice40":  # 8x8 products: an SB_MAC16 can hold two
        assert 3 <= d.dsps <= 6
    else:
        assert d.dsps == design.direct.multipliers == 6


@pytest.mark.slow(35)
def test_deep_dsps_have_fabric_registers_on_both_sides(f23_small_deep, deep_report):
    """Deep pipelines on ECP5: every MULT18X18D uses its input, pipeline and output registers, and
    still has a fabric flip-flop before each operand pin and after each used product pin (the route
    between block and fabric is too long to share a stage with an adder)."""
    _, design = f23_small_deep
    rep, work = deep_report
    for kind, core in (("winograd", design.winograd), ("direct", design.direct)):
        r = rep["families"]["ecp5"][kind]
        assert r["dsps"] == r["absorbed"]["inputs"] == r["absorbed"]["pipeline"] == r["absorbed"]["output"] > 0, r
        net = YosysNetlist.load(work / f"{core.top}_ecp5_mapped.json", core.top)
        cells = net.cells
        drivers = {b: (cells[p.cell]["type"], p.port) for b, p in net.drivers.items()}
        loads = {b: [(cells[p.cell]["type"], p.port) for p in pins if p.cell != PORT] for b, pins in net.loads.items()}
        loads = {b: pins for b, pins in loads.items() if pins}   # the cells' pins only
        for c in (c for c in cells.values() if c["type"] == "MULT18X18D"):
            pins = c["connections"]
            a_b = [b for p, (b,) in pins.items() if p[0] in "AB" and p[1:].isdigit() and isinstance(b, int)]
            assert a_b and all(drivers.get(b) == ("TRELLIS_FF", "Q") for b in a_b), core.top
            p_used = [b for p, (b,) in pins.items() if p[0] == "P" and p[1:].isdigit() and b in loads]
            assert p_used and all(ld[0] == "TRELLIS_FF" for b in p_used for ld in loads[b]), core.top


def test_place_and_route_over_seeds(deep_report):
    """ECP5 median of the seeds with the spread; the text names the formula."""
    rep, work = deep_report
    for kind in ("winograd", "direct"):
        e = rep["families"]["ecp5"][kind]
        f = e["fmax"]
        assert f["placed"] and len(f["seeds"]) >= 2 and {s["seed"] for s in f["seeds"]} == {1, 2}, e["not_placed"]
        assert f["min_mhz"] <= f["median_mhz"] <= f["max_mhz"] and f["median_mhz"] > 100
        assert f["median_mhz"] == pytest.approx(sum(s["fmax_mhz"] for s in f["seeds"]) / 2, abs=0.01)
        assert all(t > f["median_mhz"] for t in f["target_mhz"][-1:])  # the target stayed above the result
        assert e["logic"] == e["kinds"].get("logic", {}).get("LUT4", 0) + 2 * e["kinds"]["carry"]["CCU2C"]
        assert e["absorbed"]["inputs"] == e["dsps"]  # deep pipeline: DSP registers in the block
        for s in f["seeds"]:  # each seed's path that set its Fmax
            assert 1000 / s["critical_path"]["total_ns"] == pytest.approx(s["fmax_mhz"], abs=0.01), s
        assert "--placer static" in f["note"]  # how the figure was made
    text = (work / "report.txt").read_text()
    assert text == format_report(rep) + "\n"
    assert "logic = LUT4 + 2 x CCU2C" in text and "spread min..max" in text
    assert text.count("critical path (median seed): ") == 2


@pytest.mark.slow(45)
def test_place_and_route_on_the_other_families(f23_small_deep):
    """iCE40 and Gowin one seed each (xc7 has no open place and route: its reason is checked below, and
    a family not placed is reported as such in test_not_placed_past_the_time_limit)."""
    folder, _ = f23_small_deep
    work = synth_report(folder, ["ice40", "gowin"], seeds=1)
    rep = json.loads((work / "report.json").read_text())
    assert (work / "report.txt").read_text() == format_report(rep) + "\n"
    for fam in ("ice40", "gowin"):
        assert rep["families"][fam]["winograd"]["fmax_mhz"] > 10, rep["families"][fam]["winograd"]["not_placed"]


def test_not_placed_past_the_time_limit(f23_small_deep, tmp_path):
    folder, _ = f23_small_deep
    rep = synth_design(open_design(folder), ["ecp5"], tmp_path, seeds=1, pnr_timeout=0.05)
    e = rep["families"]["ecp5"]["winograd"]
    assert not e["placed"] and e["fmax_mhz"] is None and "ran past the 0.05 s limit" in e["not_placed"]
    assert "winograd not placed: place and route ran past" in format_report(rep)
    assert "not placed" in format_report(rep).split("Fmax MHz, median")[1].splitlines()[0]


def test_does_not_fit_is_not_placed(tmp_path):
    """A harness that is not needed: the capacity check says why before place and route."""
    res = measure_fmax(tmp_path / "missing.v", "xilinx", tmp_path, "h")
    assert not res.placed and "nextpnr-xilinx" in res.reason and "no open place and route for xc7" in res.reason


def test_asic_estimate_side_by_side(deep_report):
    """The technology-independent estimate (Yosys's CMOS cells) beside the FPGA families."""
    rep, _ = deep_report
    for kind in ("winograd", "direct"):
        a = rep["families"]["asic"][kind]
        assert a["cell_count"] > 100 and a["transistors_exact"] and a["transistors"] > 4 * a["cell_count"] - 1
        assert a["depth"] > 5 and a["ffs"] > 0 and a["cell_count"] == sum(a["cells"].values())
        assert set(a["cells"]) <= {"$_NAND_", "$_NOR_", "$_NOT_", "$_DFF_P_"}, a["cells"]
    text = format_report(rep)
    assert "asic (technology-independent estimate)" in text and "transistors (stat -tech cmos)" in text
    assert "logic depth, gates (longest path)" in text


@pytest.mark.slow(32)
def test_flow_end_to_end(tmp_path, capsys):
    out = tmp_path / "flow"
    code = winohdl.main(["flow", "--output", "2", "--kernel", "3", "--method", "constructive", "--family", "ecp5",
                         "--vectors", "30", "--seeds", "1", "-o", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    glance = (out / "flow.txt").read_text()
    assert "R = 4 multiplications instead of 6 (certified minimal" in glance
    assert "adders     B^T+A^T 8, G 3 (exact)" in glance
    assert "icarus PASS" in glance and "verilator PASS" in glance
    assert "ecp5 (" in glance and len(list((out / "synth").glob("synth-*/report.json"))) == 1
    assert "proved     Winograd tile PROVEN, direct convolution PROVEN" in glance
    assert re.search(r"post-syn sim \(icarus\)\s+PASS", glance)  # on by default in flow
    # the synthesis table once in the whole output, the summary in words, ending with the files to open
    assert text.count("ecp5 (LFE5U-85F-CABGA381)") == 1 and text.count("nextpnr seeds each, asked for") == 1
    assert "\n  ecp5, LFE5U-85F-CABGA381\n    DSP blocks  4 against 6 (0.67x)\n    Fmax  " in glance
    lines = glance.splitlines()
    assert lines[lines.index("open next") + 1].startswith(f"  {out / 'wino_o2_k3_s1_d1.v'}  ")
    assert lines[-2].startswith("compare    every pipeline (none, stages, deep) of this geometry: winohdl explore ")


def test_unknown_family(f23_design, capsys, tmp_path):
    folder = copy_of(f23_design[0], tmp_path / "design")
    assert winohdl.main(["synth", str(folder), "--family", "altera"]) == 2
    assert "unknown family" in capsys.readouterr().err
    assert winohdl.main(["synth", str(folder), "--family", ""]) == 2
    assert "empty family list" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--seeds", "0"], "must be >= 1"),
    (["--seeds", "21"], "--seeds must be 1..20"),
    (["--seeds", "x"], "expected a whole number"),
    (["--pnr-timeout", "0"], "must be a finite number > 0"),
    (["--pnr-timeout", "-5"], "must be a finite number > 0"),
    (["--pnr-timeout", "nan"], "must be a finite number > 0"),
    (["--verify", "yes"], "unrecognized arguments"),
])
def test_synth_options_checked_first(f23_design, cli, tmp_path, args, message):
    folder = copy_of(f23_design[0], tmp_path / "design")
    code, out, err = cli("synth", folder, "--work", tmp_path / "w", *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "w").exists()  # nothing written
