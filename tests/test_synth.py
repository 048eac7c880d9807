"""Synthesis: report parsers on stored tool output, a smoke test per family (DSPs = R where the
operands fit a DSP), place and route for Fmax, and the end-to-end flow on one geometry."""

import json
from pathlib import Path

import pytest

from winohdl import cli as winohdl
from hdl.design import generate_design, open_design, write_design_folder
from hdl.options import HardwareOptions
from hdl.synth import FAMILIES, parse_fmax, parse_stat, synthesise
from hdl.synth_report import synth_design
from miner.constructive import constructive_card
from winohdl.core.errors import WinohdlError
from winohdl.core.suite import BY_NAME

DATA = Path(__file__).parent / "data"


def test_parse_stored_yosys_stat():
    cells = parse_stat(DATA / "yosys_stat_ecp5.json")
    assert cells["MULT18X18D"] == 6 and cells["LUT4"] == 257 and cells["CCU2C"] == 259


def test_parse_stored_nextpnr_report():
    assert parse_fmax(DATA / "nextpnr_report_ecp5.json") == pytest.approx(32.0636, abs=1e-3)


def test_malformed_stat_is_one_line(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"modules": {}}))
    with pytest.raises(WinohdlError, match="not a Yosys 'stat -json' report"):
        parse_stat(p)


@pytest.fixture(scope="module")
def f23_design(tmp_path_factory):
    folder = tmp_path_factory.mktemp("f23") / "design"
    write_design_folder(folder, generate_design(constructive_card(BY_NAME["f2_3"].geometry),
                                                HardwareOptions.make(8, 8, "stages")))
    return folder, open_design(folder).design


@pytest.mark.parametrize("family", FAMILIES)
def test_dsps_equal_rank(f23_design, family, tmp_path):
    folder, design = f23_design
    w = synthesise(folder / design.winograd.verilog, design.winograd.top, family, tmp_path)
    d = synthesise(folder / design.direct.verilog, design.direct.top, family, tmp_path)
    assert w.dsps == design.rank == 4  # 9-10 bit operands: one multiplier per DSP block
    if family == "ice40":  # 8x8 products: an SB_MAC16 can hold two
        assert 3 <= d.dsps <= 6
    else:
        assert d.dsps == design.direct.multipliers == 6


def test_place_and_route_reports_fmax(f23_design, tmp_path):
    folder, _ = f23_design
    rep = synth_design(open_design(folder), ["ecp5", "ice40"], tmp_path)
    for fam in ("ecp5", "ice40"):
        for kind in ("winograd", "direct"):
            assert rep["families"][fam][kind]["fmax_mhz"] > 10, (fam, kind, rep["families"][fam][kind]["note"])
    assert "multipliers" in (tmp_path / "report.txt").read_text()


def test_flow_end_to_end(tmp_path, capsys):
    out = tmp_path / "flow"
    code = winohdl.main(["flow", "--output", "2", "--kernel", "3", "--method", "constructive", "--family", "ecp5",
                         "--vectors", "30", "-o", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    glance = (out / "flow.txt").read_text()
    assert "R = 4 multiplications instead of 6 (certified minimal" in glance
    assert "adders     B^T+A^T 8, G 3 (exact)" in glance
    assert "icarus PASS" in glance and "verilator PASS" in glance
    assert "ecp5:" in glance and len(list((out / "synth").glob("synth-*/report.json"))) == 1


def test_unknown_family(f23_design, capsys):
    folder, _ = f23_design
    assert winohdl.main(["synth", str(folder), "--family", "altera"]) == 2
    assert "unknown family" in capsys.readouterr().err
    assert winohdl.main(["synth", str(folder), "--family", ""]) == 2
    assert "empty family list" in capsys.readouterr().err
