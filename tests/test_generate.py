"""``winohdl gen``: files, summary, and bad input that writes nothing."""

import json

import pytest

from hdl.datapath import Datapath
from hdl.options import HardwareOptions
from hdl.summary import DesignSummary
from miner.constructive import constructive_card
from miner.suite import BY_NAME


def test_gen_from_geometry_writes_a_complete_design(tmp_path, cli):
    out = tmp_path / "design"
    code, text, err = cli("gen", "--output", "2", "--kernel", "3", "--pipeline", "stages", "-o", str(out))
    assert code == 0, err
    assert "latency    3 cycles" in text
    s = DesignSummary.load(out)
    assert s.top == "wino_o2_k3_s1_d1" and s.latency == 3
    assert {p.name: (p.elements, p.width) for p in s.ports.values()}["y"] == (2, 17)
    card = json.loads((out / "card.json").read_text())
    assert card["costs"]["adders_exact"] is True
    assert sorted(p.name for p in out.iterdir()) == ["card.json", "design.json", "design.txt",
                                                     "direct_o2_k3_s1_d1.v", "wino_o2_k3_s1_d1.core",
                                                     "wino_o2_k3_s1_d1.v"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_gen_offline_gives_host_transform(tmp_path, cli):
    card = constructive_card(BY_NAME["f4_3"].geometry).save(tmp_path / "c.json")
    code, _, err = cli("gen", str(card), "--kernel-transform", "offline", "-o", str(tmp_path / "d"))
    assert code == 0, err
    s = DesignSummary.load(tmp_path / "d")
    assert len(s.host_kernel_transform) == 6 and "u" in s.ports and "g" not in s.ports


@pytest.mark.parametrize("extra, words", [
    (["--data-width", "1"], "unsupported data width 1"),
    (["--kernel-width", "33"], "unsupported kernel width 33"),
    (["--pipeline", "warp"], "unknown pipeline"),
    (["--kernel-transform", "cloud"], "unknown kernel transform"),
    (["--output-width", "8", "--rounding", "stochastic"], "unknown rounding"),
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


def test_card_costs_are_the_generators_adder_counts(suite_entry):
    card = constructive_card(suite_entry.geometry)
    built = Datapath(card, HardwareOptions.make(8, 8, "none", "hw", None, "truncate", 0)).adders
    assert card.costs["adders_exact"] is True
    assert card.costs["adders"] == {k: built[k] for k in ("BT", "G", "AT")}
