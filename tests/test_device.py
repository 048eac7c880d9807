"""winohdl/core/device.py: the one device table, its family names and the figures read from it."""

from __future__ import annotations

import pytest

from hdl.components import DSP_OPERAND_BITS
from hdl.cost import MULTIPLIER_SIZES
from hdl.datapath import DSP_SIZE
from winohdl.core.device import (ECP5_PARTS, FAMILIES, FAMILY_DEVICES, FPGA_FAMILIES, PARTS, XC7_PARTS,
                                 default_dsp_size, family_device)
from winohdl.core.errors import WinohdlError


def test_one_name_per_family():
    assert FAMILIES == ("ice40", "ecp5", "xilinx", "gowin", "asic") and FPGA_FAMILIES == FAMILIES[:4]
    assert all(FAMILY_DEVICES[f].family == f for f in FAMILIES)
    assert set(MULTIPLIER_SIZES) == set(FPGA_FAMILIES)    # hdl.cost counts blocks per family, same names
    with pytest.raises(WinohdlError, match="unknown family 'xc7'"):
        family_device("xc7")


def test_dsp_geometry_of_each_family():
    assert {f: FAMILY_DEVICES[f].dsp.size for f in FPGA_FAMILIES} == {
        "ecp5": (18, 18), "xilinx": (25, 18), "ice40": (16, 16), "gowin": (18, 18)}
    assert MULTIPLIER_SIZES == {f: FAMILY_DEVICES[f].dsp.size for f in FPGA_FAMILIES}
    assert DSP_SIZE == default_dsp_size() == (18, 18) and DSP_OPERAND_BITS == 18
    assert FAMILY_DEVICES["asic"].dsp is None


def test_ecp5_parts_for_the_planner():
    figures = {p: (d.dsp_capacity, d.bram_capacity, d.lut_capacity) for p, d in ECP5_PARTS.items()}
    assert figures == {"LFE5U-25F": (28, 56, 24288), "LFE5U-45F": (72, 108, 43848),
                       "LFE5U-85F": (156, 208, 83640)}
    assert all(d.dsp.cell == "MULT18X18D" and d.bram.cell == "DP16KD" and d.bram.bits == 18432
               for d in ECP5_PARTS.values())
    ecp5 = FAMILY_DEVICES["ecp5"]
    assert ecp5.name == "LFE5U-85F-CABGA381" and ecp5.dsp_capacity == 156


def test_cells_counted_by_the_family_patterns():
    ecp5 = FAMILY_DEVICES["ecp5"]
    cells = {"LUT4": 10, "CCU2C": 3, "TRELLIS_FF": 4, "MULT18X18D": 1, "DP16KD": 2, "WEIRD": 1}
    assert ecp5.logic_count(cells) == 16
    assert ecp5.cells_by_kind(cells) == {"logic": {"LUT4": 10}, "carry": {"CCU2C": 3}, "ff": {"TRELLIS_FF": 4},
                                         "dsp": {"MULT18X18D": 1}, "bram": {"DP16KD": 2}, "other": {"WEIRD": 1}}


def test_xc7_parts_for_the_planner():
    """DS190 / DS180: DSP48E1, block RAM counted in RAMB18E1 halves (140 and 135 RAMB36E1), LUT6."""
    figures = {p: (d.dsp_capacity, d.bram_capacity, d.lut_capacity) for p, d in XC7_PARTS.items()}
    assert figures == {"XC7Z020": (220, 280, 53200), "XC7A100T": (240, 270, 63400)}
    for d in XC7_PARTS.values():
        assert (d.family, d.dsp.cell, d.dsp.size, d.bram.cell, d.bram.bits, d.lut) == \
            ("xilinx", "DSP48E1", (25, 18), "RAMB18E1", 18432, "LUT6")
        assert d.bram.widths == (1, 2, 4, 9, 18, 36) and d.lutram.shapes == (("RAM32M", 32, 6), ("RAM64M", 64, 3))
    assert PARTS == {**ECP5_PARTS, **XC7_PARTS} and FAMILY_DEVICES["xilinx"].bram == XC7_PARTS["XC7Z020"].bram


def test_block_rams_counted_in_the_parts_units():
    xc7, ecp5 = FAMILY_DEVICES["xilinx"], FAMILY_DEVICES["ecp5"]
    assert xc7.bram_count({"RAMB36E1": 3, "RAMB18E1": 2, "LUT6": 9, "RAM64M": 4}) == 8
    assert ecp5.bram_count({"DP16KD": 5, "LUT4": 3}) == 5
