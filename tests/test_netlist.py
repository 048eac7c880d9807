"""winohdl/core/netlist.py: the one reader and writer of Yosys JSON netlists, on hand-made netlists."""

from __future__ import annotations

import json

import pytest

from winohdl.core.netlist import PORT, NetlistError, Pin, YosysNetlist, edit_netlist


def _data() -> dict:
    """``a`` (bit 2) -> ff (Q 3) -> lut (Z 4) -> output ``y``; a blackbox module without cells."""
    ff = {"type": "TRELLIS_FF", "port_directions": {"DI": "input", "Q": "output"},
          "connections": {"DI": [2], "Q": [3]}}
    lut = {"type": "LUT4", "port_directions": {"A": "input", "B": "input", "Z": "output"},
           "connections": {"A": [3], "B": ["0"], "Z": [4]}}
    top = {"ports": {"a": {"direction": "input", "bits": [2]}, "y": {"direction": "output", "bits": [4]}},
           "cells": {"ff": ff, "lut": lut}, "netnames": {"q": {"bits": [3]}}}
    return {"modules": {"LUT4": {"attributes": {"blackbox": "1"}}, "top": top}}


def test_top_is_the_module_named_or_the_one_with_cells():
    assert YosysNetlist(_data()).top == "top" == YosysNetlist(_data(), "top").top
    assert YosysNetlist(_data(), "LUT4").cells == {}
    with pytest.raises(NetlistError, match="no module 'nope'"):
        YosysNetlist(_data(), "nope")
    with pytest.raises(NetlistError, match="no module"):
        YosysNetlist({"modules": {}})


def test_drivers_and_loads_of_each_bit():
    net = YosysNetlist(_data())
    assert net.drivers == {3: Pin("ff", "Q", 0), 4: Pin("lut", "Z", 0)}
    assert net.loads[2] == [Pin("ff", "DI", 0)] and net.loads[3] == [Pin("lut", "A", 0)]
    assert net.loads[4] == [Pin(PORT, "", 0)]      # the module's output port
    assert net.loads[99] == [] and net.multiply_driven == []
    assert net.of_type("LUT4", "TRELLIS_FF") == ["ff", "lut"] and net.netnames["q"]["bits"] == [3]


def test_a_bit_driven_twice_is_named():
    data = _data()
    data["modules"]["top"]["cells"]["lut"]["connections"]["Z"] = [3]
    net = YosysNetlist(data)
    assert net.multiply_driven == [3] and net.drivers[3] == Pin("lut", "Z", 0)


def test_edits_reindex_and_write_back_once(tmp_path):
    path = tmp_path / "n.json"
    path.write_text(json.dumps(_data()))
    net = YosysNetlist.load(path)
    assert 3 in net.drivers
    net.cells["lut"]["connections"]["A"] = [2]
    net.changed()
    assert net.loads[2] == [Pin("ff", "DI", 0), Pin("lut", "A", 0)]
    net.remove(["ff"])
    assert 3 not in net.drivers and net.loads[2] == [Pin("lut", "A", 0)]
    net.write(path)
    again = json.loads(path.read_text())
    assert set(again["modules"]) == {"LUT4", "top"} and set(again["modules"]["top"]["cells"]) == {"lut"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.json"]


def test_edit_netlist_reads_once_and_writes_once(tmp_path):
    path = tmp_path / "n.json"
    path.write_text(json.dumps(_data()))
    net, n = edit_netlist(path, lambda net: net.remove(["lut"]) or len(net.cells))
    assert n == 1 and set(net.cells) == {"ff"}
    assert set(json.loads(path.read_text())["modules"]["top"]["cells"]) == {"ff"}
