"""synth/floorplan.py: clusters of multipliers and the block RAMs that feed them, fixed on the sites
of an unconstrained run; and through measure_fmax, with real Yosys and nextpnr-ecp5."""

from __future__ import annotations

import json

import pytest

from synth.families import FAMILY_SPECS
from synth.floorplan import Floorplan, operand_clusters, plan_floor, write_floorplanned
from synth.pnr import measure_fmax, place_and_route
from winohdl.core.netlist import YosysNetlist


def _cell(kind: str, inputs: dict, outputs: dict, site: str | None = None) -> dict:
    conns = {**inputs, **outputs}
    dirs = {**{p: "input" for p in inputs}, **{p: "output" for p in outputs}}
    attrs = {"NEXTPNR_BEL": site} if site else {}
    return {"type": kind, "connections": conns, "port_directions": dirs, "attributes": attrs}


def _netlist(sites: dict | None = None) -> dict:
    """r0 feeds m1 and m0 (one cluster, with r1 through m1), r2 feeds m2, m3 reads a flip-flop only,
    r3 feeds no multiplier. Bits: r0 -> 10, 11; r1 -> 12; r2 -> 13; r3 -> 14; ff -> 15."""
    s = sites or {}
    cells = {
        "r0": _cell("DP16KD", {"ADA0": [1]}, {"DOA0": [10], "DOA1": [11]}, s.get("r0")),
        "r1": _cell("DP16KD", {"ADA0": [1]}, {"DOA0": [12]}, s.get("r1")),
        "r2": _cell("DP16KD", {"ADA0": [1]}, {"DOA0": [13]}, s.get("r2")),
        "r3": _cell("DP16KD", {"ADA0": [1]}, {"DOA0": [14]}, s.get("r3")),
        "ff": _cell("TRELLIS_FF", {"DI": [2]}, {"Q": [15]}),
        "m10": _cell("MULT18X18D", {"A0": [10], "B0": [12]}, {"P0": [20]}, s.get("m10")),
        "m2": _cell("MULT18X18D", {"A0": [11], "B0": [11]}, {"P0": [21]}, s.get("m2")),
        "m3": _cell("MULT18X18D", {"A0": [13], "B0": [2, "0"]}, {"P0": [22]}, s.get("m3")),
        "m4": _cell("MULT18X18D", {"A0": [15]}, {"P0": [23]}, s.get("m4")),
    }
    return {"modules": {"top": {"cells": cells}}}


PLACED = {"m10": "X49/Y34/MULT18_0", "m2": "X22/Y34/MULT18_0", "m3": "X23/Y34/MULT18_1",
          "m4": "X26/Y34/MULT18_4", "r0": "X4/Y46/EBR0", "r1": "X24/Y22/EBR1", "r2": "X51/Y22/EBR1",
          "r3": "X22/Y46/EBR0"}


def test_clusters_are_the_multipliers_sharing_block_rams():
    assert operand_clusters(YosysNetlist(_netlist())) == ((("m2", "m10"), ("r0", "r1")), (("m3",), ("r2",)))


def test_plan_permutes_each_kind_among_its_own_sites():
    plan = plan_floor(YosysNetlist(_netlist()), YosysNetlist(_netlist(PLACED)))
    # multipliers in cluster order on the DSP sites by row, then column (m4, fed by no block RAM,
    # stays free); the clusters' block RAMs on their own three sites, each the nearest one left to
    # its cluster (m2, m10 at X22, X23: r0 takes X24/Y22, r1 X4/Y46; r2, for m3 at X26, X51/Y22);
    # r3, which feeds no multiplier, kept where it was
    assert plan.clusters == (("m2", "m10"), ("m3",))
    assert dict(plan.sites) == {"m2": "X22/Y34/MULT18_0", "m10": "X23/Y34/MULT18_1", "m3": "X26/Y34/MULT18_4",
                                "r0": "X24/Y22/EBR1", "r1": "X4/Y46/EBR0", "r2": "X51/Y22/EBR1",
                                "r3": "X22/Y46/EBR0"}
    assert (plan.multipliers, plan.operand_rams, plan.other_rams) == (3, 3, 1)
    assert plan.describe().startswith("floorplan: 3 MULT18X18D in 2 clusters beside the 3 DP16KD that feed them, "
                                      "the other 1 DP16KD kept")
    one = Floorplan((("m0", "m1"),), (("m0", "X22/Y34/MULT18_0"), ("m1", "X23/Y34/MULT18_1"), ("r0", "X4/Y46/EBR0")), 1)
    assert one.describe().startswith("floorplan: 2 MULT18X18D in 1 cluster beside the 1 DP16KD that feed them, "
                                     "the other 0 DP16KD kept")


def test_write_floorplanned_fixes_only_the_planned_cells(tmp_path):
    (tmp_path / "n.json").write_text(json.dumps(_netlist()))
    (tmp_path / "p.json").write_text(json.dumps(_netlist(PLACED)))
    plan = write_floorplanned(YosysNetlist.load(tmp_path / "n.json"), tmp_path / "p.json", tmp_path / "f.json")
    cells = YosysNetlist.load(tmp_path / "f.json", "top").cells
    assert {n: c["attributes"]["BEL"] for n, c in cells.items() if "BEL" in c["attributes"]} == dict(plan.sites)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json", "n.json", "p.json"]


# two block RAMs (registered reads) into one multiplier, a third into another: two clusters
BRAM_TO_DSP = """
module fp_top(input clk, input we, input [8:0] wa, input [8:0] ra, input [17:0] wd,
              output reg [35:0] p0, output reg [35:0] p1);
  (* no_rw_check *) reg [17:0] ma [0:511];
  (* no_rw_check *) reg [17:0] mb [0:511];
  (* no_rw_check *) reg [17:0] mc [0:511];
  reg [17:0] a, b, c;
  always @(posedge clk) begin
    if (we) begin ma[wa] <= wd; mb[wa] <= wd ^ 18'h2aaaa; mc[wa] <= wd + 18'd1; end
    a <= ma[ra]; b <= mb[ra]; c <= mc[ra];
    p0 <= $signed(a) * $signed(b); p1 <= $signed(c) * $signed(c);
  end
endmodule
"""


@pytest.mark.slow(11)
def test_measure_fmax_floorplans_block_ram_fed_multipliers(tmp_path):
    """The first run is recorded, the seeds run on the floorplanned netlist, and nextpnr keeps every
    fixed cell on its site."""
    (tmp_path / "fp_top.v").write_text(BRAM_TO_DSP)
    res = measure_fmax(tmp_path / "fp_top.v", "ecp5", tmp_path, "fp_top", seeds=1, target_mhz=200)
    assert res.placed, res.reason
    assert res.unconstrained["seed"] == 1 and res.unconstrained["fmax_mhz"] > 50
    assert res.floorplan.startswith("floorplan: 2 MULT18X18D in 2 clusters beside the 3 DP16KD")
    assert res.floorplan in res.note and res.to_json()["floorplan"] == res.floorplan
    fixed = {n: c["attributes"]["BEL"] for n, c in
             YosysNetlist.load(tmp_path / "fp_top_ecp5_floorplanned.json", "fp_top").cells.items()
             if "BEL" in c["attributes"]}
    assert len(fixed) == 5
    place_and_route(tmp_path / "fp_top_ecp5_floorplanned.json", "ecp5", tmp_path, "check", 2, 200, 600,
                    placed=tmp_path / "check.json")
    placed = YosysNetlist.load(tmp_path / "check.json", "top").cells
    assert {n: placed[n]["attributes"]["NEXTPNR_BEL"] for n in fixed} == fixed


def test_first_run_past_the_time_limit_is_not_placed(tmp_path):
    (tmp_path / "fp_top.v").write_text(BRAM_TO_DSP)
    res = measure_fmax(tmp_path / "fp_top.v", "ecp5", tmp_path, "fp_top", seeds=1, timeout=0.05)
    assert not res.placed and res.seeds == [] and res.floorplan == ""
    assert res.reason == "place and route ran past the 0.05 s limit (--pnr-timeout) in the floorplan's first run"


ADDER = """
module add_top(input clk, input [7:0] a, input [7:0] b, output reg [8:0] s);
  reg [7:0] ra, rb;
  always @(posedge clk) begin ra <= a; rb <= b; s <= ra + rb; end
endmodule
"""


@pytest.mark.slow(6)
def test_a_seed_past_the_time_limit_leaves_the_others(tmp_path):
    """nextpnr's router can circle for hours on one seed and finish in seconds on the next: a seed past
    the limit is listed as not routed, the Fmax is the other seeds'; with every seed past it, not placed."""
    (tmp_path / "add_top.v").write_text(ADDER)

    def second_seed_cut_short(fn, runs):
        return [fn(r[:-1] + (0.05,) if r[4] == 2 else r) for r in runs]

    res = measure_fmax(tmp_path / "add_top.v", "ecp5", tmp_path, "add_top", seeds=3, target_mhz=1000,
                       map_seeds=second_seed_cut_short)
    assert res.placed and [s["seed"] for s in res.seeds] == [1, 3] and res.median > 50
    assert res.unrouted == [{"seed": 2, "reason": "place and route ran past the 0.05 s limit (--pnr-timeout) "
                                                  "at seed 2"}]
    assert res.to_json()["unrouted"] == res.unrouted
    none = measure_fmax(tmp_path / "add_top.v", "ecp5", tmp_path, "add_top", seeds=2, timeout=0.05)
    assert not none.placed and none.seeds == [] and [u["seed"] for u in none.unrouted] == [1, 2]
    assert none.reason == none.unrouted[0]["reason"]


class _StopFirstRoutes:
    """A stand-in for the circling watch that stops the first ``n`` routes as soon as nextpnr writes to its
    log (a real router1 circles only on a congested placement, minutes into its route)."""

    def __init__(self, n: int):
        self.n, self.made = n, 0

    def __call__(self):
        self.made += 1
        stop = self.made <= self.n
        return lambda text: "stopped by the test" if stop and text else ""


@pytest.mark.slow(6)
def test_a_route_stopped_as_circling_is_routed_again_from_the_same_placement(tmp_path, monkeypatch):
    """ECP5 places a seed once and routes it again with the next router seed when a route circles; when
    every route circles the seed is not routed, and says so."""
    (tmp_path / "add_top.v").write_text(ADDER)
    monkeypatch.setattr("winohdl.core.tools.WATCH_POLL_S", 0.05)    # the adder routes in a second or two
    monkeypatch.setattr("synth.pnr.RouterCircling", _StopFirstRoutes(1))
    res = measure_fmax(tmp_path / "add_top.v", "ecp5", tmp_path, "add_top", seeds=1, target_mhz=1000)
    assert res.placed and res.seeds[0]["routes"] == 2 and res.median > 50
    logs = sorted(p.name for p in tmp_path.glob("add_top_ecp5_s1_t1000_*nextpnr.log"))
    assert logs == [f"add_top_ecp5_s1_t1000_{s}_nextpnr.log" for s in ("place", "route0", "route1")]
    placing, routing = ((tmp_path / logs[k]).read_text() for k in (0, 2))
    assert "(FAIL at 1000.00 MHz)" in placing and "(FAIL at 1000.00 MHz)" in routing    # one target, both steps
    assert not list(tmp_path.glob("*_placement.json"))    # the placement goes once routed
    attempts = FAMILY_SPECS["ecp5"].route_attempts
    monkeypatch.setattr("synth.pnr.RouterCircling", _StopFirstRoutes(attempts))
    res = measure_fmax(tmp_path / "add_top.v", "ecp5", tmp_path, "add_top", seeds=1, target_mhz=1000)
    assert not res.placed and res.seeds == [] and not list(tmp_path.glob("*_placement.json"))
    assert res.reason == res.unrouted[0]["reason"] == (
        f"nextpnr's router circled on all {attempts} routes of the placement at seed 1 "
        "(the last: stopped by the test)")
