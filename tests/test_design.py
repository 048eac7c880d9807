"""The design artefact (hdl/design.py): derived from card and options, written as a whole,
checked on load against its card, its options and its manifest."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hdl.datapath import Datapath
from hdl.design import (CARD_FILE, DESIGN_FILE, DesignError, Direction, generate_design, open_design,
                        write_design_folder)
from hdl.cost import cost_of
from hdl.options import HardwareOptions, KernelTransform, Pipeline
from miner.constructive import constructive_card
from winohdl.core.suite import BY_NAME

from hdl_helpers import summary_ports, verilog_ports

ROOT = Path(__file__).resolve().parent.parent


def make(folder, name="f2_3", options=HardwareOptions()):
    return write_design_folder(folder, generate_design(constructive_card(BY_NAME[name].geometry), options))


def test_gen_from_geometry_writes_a_complete_design(tmp_path, cli):
    out = tmp_path / "design"
    code, text, err = cli("gen", "--output", "2", "--kernel", "3", "--pipeline", "stages", "-o", str(out))
    assert code == 0, err
    assert "latency    4 cycles" in text
    d = open_design(out).design
    assert d.winograd.top == "wino_o2_k3_s1_d1" and d.latency == 4
    assert d.options.pipeline is Pipeline.STAGES
    assert (d.winograd.port("y").elements, d.winograd.port("y").width) == (2, 17)
    assert [p.name for p in d.winograd.ports] == ["clk", "rst", "d", "g", "y", "in_valid", "out_valid"]
    assert d.winograd.port("y").direction is Direction.OUT
    card = json.loads((out / CARD_FILE).read_text())
    assert card["costs"]["adders"] == {"BT": 4, "G": 3, "AT": 4}
    assert sorted(p.name for p in out.iterdir()) == ["card.json", "design.json", "design.txt",
                                                     "direct_o2_k3_s1_d1.v", "wino_o2_k3_s1_d1.core",
                                                     "wino_o2_k3_s1_d1.v"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_files_have_normal_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        folder = make(tmp_path / "d")
    finally:
        os.umask(old)
    assert {oct(p.stat().st_mode & 0o777) for p in folder.iterdir()} == {"0o644"}
    assert oct(folder.stat().st_mode & 0o777) == "0o755"


def test_ports_come_from_the_signature(tmp_path):
    folder = make(tmp_path / "d", "f4_3", HardwareOptions.make(8, 8, "none", "offline"))
    d = open_design(folder).design
    assert d.options.kernel_transform is KernelTransform.OFFLINE
    assert len(d.host_kernel_transform) == 6 and d.winograd.port("u") is not None and d.winograd.port("g") is None
    v = (folder / d.winograd.verilog).read_text()
    for p in d.winograd.ports:
        kind = "input" if p.direction is Direction.IN else "output"
        assert (f"{kind} [{p.bits - 1}:0] {p.name};" if p.bits > 1 else f"{kind} {p.name};") in v


def test_gen_offline_gives_host_transform(tmp_path, cli):
    card = constructive_card(BY_NAME["f4_3"].geometry).save(tmp_path / "c.json")
    code, _, err = cli("gen", str(card), "--kernel-transform", "offline", "-o", str(tmp_path / "d"))
    assert code == 0, err
    d = open_design(tmp_path / "d").design
    assert [list(r) for r in d.host_kernel_transform] == [list(r) for r in Datapath(
        constructive_card(BY_NAME["f4_3"].geometry), HardwareOptions.make(8, 8, "none", "offline")).scaled.G]


@pytest.mark.parametrize("extra, words", [
    (["--data-width", "1"], "unsupported data width 1"),
    (["--kernel-width", "33"], "unsupported kernel width 33"),
    (["--pipeline", "warp"], "invalid choice: 'warp'"),
    (["--kernel-transform", "cloud"], "invalid choice: 'cloud'"),
    (["--output-width", "8", "--rounding", "stochastic"], "invalid choice: 'stochastic'"),
    (["--rounding", "round-half-up"], "--rounding applies only with --output-width"),
    (["--output-shift", "2"], "--output-shift applies only with --output-width"),
])
def test_bad_options(tmp_path, cli, extra, words):
    code, _, err = cli("gen", "--output", "2", "--kernel", "3", "-o", str(tmp_path / "d"), *extra)
    assert code == 2 and words in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_failing_card_writes_nothing(tmp_path, cli):
    data = constructive_card(BY_NAME["f2_3"].geometry).to_json()
    data["G"][1][0] = "1/3"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    code, _, err = cli("gen", str(bad), "-o", str(tmp_path / "d"))
    assert code == 2 and "identity fails" in err
    assert [p.name for p in tmp_path.iterdir()] == ["bad.json"]


def test_gen_needs_card_or_geometry(tmp_path, cli):
    code, _, err = cli("gen", "-o", str(tmp_path / "d"))
    assert code == 2 and "card JSON or a geometry" in err


def test_gen_refuses_card_and_geometry(tmp_path, cli):
    card = constructive_card(BY_NAME["f2_3"].geometry).save(tmp_path / "c.json")
    code, _, err = cli("gen", str(card), "--output", "4", "--kernel", "5", "-o", str(tmp_path / "d"))
    assert code == 2 and "not both" in err and not (tmp_path / "d").exists()


def test_card_costs_are_the_generators_adder_counts(suite_entry):
    card = constructive_card(suite_entry.geometry)
    built = Datapath(card, HardwareOptions()).adders
    cost = cost_of(card)
    assert (cost.adders.BT, cost.adders.G, cost.adders.AT) == (built["BT"], built["G"], built["AT"])


# ---- loading: nothing that can be recomputed is trusted ------------------------------------------------

def _tamper(folder: Path, change) -> None:
    data = json.loads((folder / DESIGN_FILE).read_text())
    change(data)
    (folder / DESIGN_FILE).write_text(json.dumps(data))


@pytest.mark.parametrize("change, words", [
    (lambda d: d["options"].update(colour="red"), "unknown option 'colour'"),
    (lambda d: d.pop("winograd"), "field winograd is missing"),
    (lambda d: d["geometry"].update(output=[3]), "geometry.output[0] is 3, the card and options give 2"),
    (lambda d: d["winograd"]["ports"][2].update(elements="2"), "winograd.ports[2].elements is '2'"),
    (lambda d: d["winograd"]["ports"][2].update(width=9), "winograd.ports[2].width is 9"),
    (lambda d: d.pop("direct"), "field direct is missing"),
    (lambda d: d.update(extra=1), "unknown field extra"),
    (lambda d: d.update(latency=3), "unknown field latency"),
    (lambda d: d["adders"].update(BT=0), "adders.BT is 0"),
    (lambda d: d.update(card_hash="0" * 64), "card_hash does not match"),
    (lambda d: d.update(format="winohdl-design/1"), "is not a winohdl-design/2"),
    (lambda d: d["manifest"].update({"../x": "0"}), "outside the folder"),
    (lambda d: d.update(generation_seconds="fast"), "generation_seconds must be a number"),
])
def test_tampered_design_json_is_refused(tmp_path, change, words):
    folder = make(tmp_path / "d")
    _tamper(folder, change)
    with pytest.raises(DesignError) as e:
        open_design(folder)
    assert words in str(e.value)


def test_edited_verilog_needs_allow_edits(tmp_path):
    folder = make(tmp_path / "d")
    v = folder / open_design(folder).design.winograd.verilog
    v.write_text(v.read_text().replace("endmodule", "endmodule // edited", 1))
    with pytest.raises(DesignError, match="does not match the design's manifest.*--allow-edits"):
        open_design(folder)
    assert open_design(folder, allow_edits=True).edited == (v.name,)


def test_another_card_is_refused_even_with_allow_edits(tmp_path):
    folder = make(tmp_path / "d")
    constructive_card(BY_NAME["f2_3"].geometry).save(folder / CARD_FILE)  # same algorithm, other bytes
    with pytest.raises(DesignError, match="card.json does not match"):
        open_design(folder, allow_edits=True)


def test_regenerating_replaces_the_whole_folder(tmp_path):
    folder = make(tmp_path / "d", "f2_3", HardwareOptions.make(12, 12))
    (folder / "stale.txt").write_text("from an older run")
    make(folder, "f2_3", HardwareOptions.make(8, 8))
    assert not (folder / "stale.txt").exists()
    assert open_design(folder).design.options.data_width == 8
    assert [p.name for p in tmp_path.iterdir()] == ["d"]


_KILL_SCRIPT = """
import sys, time
from pathlib import Path
import hdl.design as design
from hdl.options import HardwareOptions
from miner.constructive import constructive_card
from winohdl.core.suite import BY_NAME
real = Path.write_text
def slow(self, *a, **k):
    real(self, *a, **k)
    print("wrote", self.name, flush=True)
    time.sleep(0.2)
Path.write_text = slow
design.write_design_folder(sys.argv[1], design.generate_design(constructive_card(BY_NAME["f2_3"].geometry),
                                                              HardwareOptions.make(12, 12)))
print("done", flush=True)
"""


@pytest.mark.parametrize("after_files, width", [(1, 8), (3, 8), (5, 8), (None, 12)])
def test_sigkill_during_gen_leaves_the_old_or_the_new_folder(tmp_path, after_files, width):
    folder = make(tmp_path / "d", "f2_3", HardwareOptions.make(8, 8))
    with subprocess.Popen([sys.executable, "-c", _KILL_SCRIPT, str(folder)], cwd=ROOT, stdout=subprocess.PIPE,
                          text=True) as p:  # closes the pipe
        if after_files is None:
            assert p.stdout.read().endswith("done\n")
        for _ in range(after_files or 0):
            assert p.stdout.readline().startswith("wrote")
        p.send_signal(signal.SIGKILL)
        p.wait()
    # complete and consistent (every file matches the manifest): the old folder or the new one, never a mix
    assert open_design(folder).design.options.data_width == width


def test_mine_never_writes_into_a_design_folder(tmp_path, cli):
    folder = make(tmp_path / "d")
    before = (folder / CARD_FILE).read_bytes()
    code, _, err = cli("mine", "--output", "2", "--kernel", "3", "--method", "constructive", "-o", str(folder))
    assert code == 2 and "is a design folder" in err
    assert (folder / CARD_FILE).read_bytes() == before


@pytest.mark.parametrize("name, options", [
    ("f2_3", HardwareOptions()), ("f2x2_3x3", HardwareOptions.make(8, 8, "deep", "offline")),
    ("s21_3x3", HardwareOptions.make(6, 5, "stages", "hw", 12, "round-half-even", 3))], ids=["none", "deep", "stages"])
def test_summary_ports_are_the_verilog_ports(tmp_path, name, options):
    """design.json's ports (name, direction, bits) are those the Verilog module declares, tile and baseline."""
    opened = open_design(make(tmp_path / "d", name, options))
    for core in (opened.design.winograd, opened.design.direct):
        assert summary_ports(core) == verilog_ports(opened.path(core.verilog).read_text(), core.top)
