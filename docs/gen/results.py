"""The benchmark tables, rendered from the committed result records (``docs/results/NAME.json``) at
every build, where a page says ``<!-- results: NAME -->``.

A record is the JSON a bench script writes (``build/bench/...``) or the same shape where no script
collects the figures, each row stamped with its ``date``, ``commit`` and ``machine``: a new run updates
its table by being copied into ``docs/results/`` and stamped. A cell is ``-`` where the figure does not
exist (``null``: a design not placed, a plan that does not fit) and empty where it was not measured or
not recorded (the key absent). Numbers are printed as recorded, with thousands separators; a column
with a format prints every figure at the precision its script prints.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

RESULTS = Path(__file__).resolve().parent.parent / "results"
MARK = re.compile(r"<!-- results: ([\w-]+) -->")
STAMP = ("date", "commit", "machine")
MAX_CELL = 120
"""Characters of a cell at most: a longer one is a note, and goes under the table."""

ABSENT = object()   # a key the record does not have: not measured or not recorded


def get(row: dict, path: str):
    """``row["a"]["b"]`` for ``"a.b"``; :data:`ABSENT` where a key is missing."""
    for key in path.split("."):
        if not isinstance(row, dict) or key not in row:
            return ABSENT
        row = row[key]
    return row


def fmt(value, spec: str = ",") -> str:
    """One cell: empty if absent, ``-`` if null, a number with ``spec`` (thousands separators by default)."""
    if value is ABSENT:
        return ""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return format(value, spec)
    return str(value)


@dataclass(frozen=True)
class Column:
    head: str
    cell: str | Callable[[dict], str]   # a key path of the row, or a function of the row
    spec: str = ","

    def text(self, row: dict) -> str:
        return self.cell(row) if callable(self.cell) else fmt(get(row, self.cell), self.spec)


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]
    rows: str = "rows"   # the record's key holding the rows (bench/network.py writes "plans")
    lines: Callable[[dict], list[dict]] | None = None   # one row as several table lines
    notes: Callable[[list[dict]], list[str]] | None = None   # list items under the table


def _with(row: dict, key: str, extra: str, spec: str = ",") -> str:
    """``value (extra)`` where the row has ``extra``: a figure beside what it is compared with."""
    value, more = fmt(get(row, key), spec), get(row, extra)
    return value if more is ABSENT else f"{value} ({fmt(more, spec)})"


def _tree(r: dict) -> str:
    """How a fabric product's tree is registered (rows before the choice: every level); none in a DSP block."""
    return "-" if r.get("kind") == "dsp" else r.get("tree", "every level")


def _fmax(row: dict) -> str:
    """The median and the spread of the seeds (one seed: the value alone)."""
    f = get(row, "fmax")
    if f is ABSENT:
        return ""
    if not f["placed"]:
        return "not placed"
    if f["min_mhz"] == f["max_mhz"]:
        return f"{f['median_mhz']:.1f}"
    return f"{f['median_mhz']:.1f} ({f['min_mhz']:.1f}-{f['max_mhz']:.1f})"


def _seconds(key: str, spec: str) -> Callable[[dict], str]:
    return lambda r: fmt(get(r, key)) if get(r, key) in (ABSENT, None) else f"{fmt(get(r, key), spec)} s"


def _times(key: str) -> Callable[[dict], str]:
    """A ratio as the bench scripts print it (two decimals), with its ``x``."""
    return lambda r: fmt(get(r, key)) if get(r, key) in (ABSENT, None) else f"{get(r, key):.2f}x"


def _dsp_share(r: dict) -> str:
    """The DSP blocks the Winograd plan needs for the direct plan's frames, and their share of the direct plan's."""
    a, b = get(r, "matched_dsp"), get(r, "direct_dsp")
    return fmt(a) if not isinstance(a, int) or not isinstance(b, int) else f"{a:,} ({a / b:.2f}x)"


def _slowest(r: dict) -> str:
    where = [r[k] for k in ("slowest", "slowest_note") if k in r]
    return f"{r['slowest_seconds']:.1f} s" + (f" ({', '.join(where)})" if where else "")


def _xc7_brams(r: dict) -> str:
    """The block RAM in RAMB18E1 halves, and the cells Yosys mapped (a RAMB36E1 counts two)."""
    return f"{fmt(r['brams'])} (" + ", ".join(f"{n:,} {c}" for c, n in sorted(r["bram_cells"].items())) + ")"


# ---- pruning: bench/pruning.py's rows ---------------------------------------------------------------------

def _ratio(row: dict, key: str) -> str:
    """``<key>_gated / <key>_plain`` as a factor, or - where the row has neither."""
    plain, gated = row.get(f"{key}_plain"), row.get(f"{key}_gated")
    return "-" if plain is None or gated is None else f"{gated / plain:.3f}x"


def _pair(row: dict, key: str) -> str:
    plain, gated = row.get(f"{key}_plain"), row.get(f"{key}_gated")
    return "-" if plain is None else f"{plain:,} / {gated:,}"


def _percent(value, spec: str = ".2f") -> str:
    return "-" if value is None else f"{value:{spec}}%"


def _products(row: dict, kind: str) -> str:
    """Products per frame counted from the weights, and as a share of the same example's dense direct
    network (its 0% spatial row)."""
    value = row["products"][kind]
    if value is None:
        return "-"
    base = next(r["products"]["direct"] for r in rows("pruning")
                if r["example"] == row["example"] and r["fraction"] == 0 and r["domain"] == "spatial")
    return f"{value:,} ({value / base:.3f}x)"


def _pruning_sim(_rows: list[dict]) -> list[str]:
    """The Verilator runs of the record (its ``sim``), one note each."""
    return [f"{s['example']}, {s['network']}: {s['checked']:,} of {s['images']:,} held-out images bit-exact on "
            f"Verilator against the integer model ({'PASS' if s['passed'] else 'FAIL'}, {s['cycles']:,} cycles; "
            f"{s['commit']})" for s in load("pruning").get("sim", [])]


def _hw(row: dict, which: str, key: str, spec: str = ",") -> str:
    """A pruning_hardware row's figure of its ``which`` hardware (smallest, smallest direct, winograd plan)."""
    h = row.get("hardware", {}).get(which)
    return "-" if h is None else format(h[key], spec)


def _work(row: dict, which: str) -> str:
    """Multiplier-cycles a frame of ``which`` hardware, as a share of the example's dense network built direct
    (its smallest direct engines: one multiplier-cycle a product, as nearly as the engines' periods let)."""
    h = row.get("hardware", {}).get(which)
    if h is None:
        return "-"
    base = next(r["hardware"]["smallest direct"]["mult_cycles"] for r in rows("pruning_hardware")
                if r["example"] == row["example"] and r["fraction"] == 0 and r["domain"] == "spatial")
    return f"{h['mult_cycles']:,} ({h['mult_cycles'] / base:.3f}x)"


def _networks(_rows: list[dict]) -> list[str]:
    """The simulated (and synthesised) networks of the record, one note each."""
    out = []
    for s in load("pruning_hardware").get("sim", []):
        y = s.get("synth") or {}
        fm = y.get("fmax") or {}
        fmax = (f"Fmax {fm['median_mhz']} MHz (seeds {fm['min_mhz']}-{fm['max_mhz']})" if fm.get("placed")
                else f"not placed: {fm.get('reason', '')}")
        cells = (f"; ECP5 (Yosys, nextpnr): {y['dsps']} MULT18X18D, {y['brams']} DP16KD, logic {y['logic']:,}, "
                 f"FF {y['ffs']:,}, {fmax}" if y else "")
        planned = f"{s['dsp']} DSP, " if "dsp" in s else ""
        how = "the smallest hardware's model" if s.get("decided") == "smallest" else "planned"
        out.append(f"{s['example']}, {s['network']} ({how}: {planned}{s['plan_cycles']:,} cycles a frame): "
                   f"{s['checked']:,} of {s['images']:,} held-out images bit-exact on Verilator against the integer "
                   f"model, onnxruntime {'equal' if s['passed'] else 'NOT equal'} ({s['cycles']:,} cycles){cells}")
    return out


# ---- the tiles: bench/timing.py's rows, one line per design as the script prints them ------------------

TITLES = {"f2x2_3x3": "F(2x2,3x3)", "s2_5x5": "s2 5x5", "f4x4_3x3": "F(4x4,3x3)", "f6x6_3x3": "F(6x6,3x3)"}


def _tile_lines(row: dict) -> list[dict]:
    out = []
    for kind in ("winograd", "direct"):
        first = kind == "winograd"   # the geometry, pipeline and stamp once per row, as the script prints
        line = {**row[kind], "design": kind, "latency": row["latency"][kind],
                "geometry": TITLES.get(row["geometry"], row["geometry"]) if first else "",
                "pipeline": f"`{row['pipeline']}`" if first else ""}
        line.update({k: row[k] if first else "" for k in STAMP})
        out.append(line)
    return out


def _tile_fmax(line: dict) -> str:
    f = line["fmax"]
    return f"{f['median_mhz']:.1f}" if f["placed"] else "not placed"


def _tile_spread(line: dict) -> str:
    f = line["fmax"]
    return f"{f['min_mhz']:.0f}..{f['max_mhz']:.0f}" if f["placed"] else ""


def _not_placed(rows: list[dict]) -> list[str]:
    """bench/timing.py's lines for a design not placed, with the seeds that finished before it stopped."""
    out = []
    for r in rows:
        for kind in ("winograd", "direct"):
            reason = r[kind].get("not_placed")
            if reason:
                done = [f"seed {s['seed']} {s['fmax_mhz']:.1f} MHz ({s['seconds']:.0f} s)"
                        for s in r[kind]["fmax"].get("seeds", []) if s.get("fmax_mhz") is not None]
                out.append(f"{TITLES.get(r['geometry'], r['geometry'])} `{r['pipeline']}` {kind}: not placed: "
                           f"{reason}" + (f"; finished before it: {', '.join(done)}" if done else ""))
    return out


# ---- the tables, each a column order --------------------------------------------------------------------

TABLES: dict[str, Table] = {
    "network_accuracy": Table((
        Column("network", "network"), Column("held-out images", "images"),
        Column("float", lambda r: f"{r['float_accuracy']}%"),
        Column("int8", lambda r: f"{r['int8_accuracy']}% ({r['int8_correct']}/{r['images']})"),
        Column("int8 calibrated on", "calibration"))),
    "network_sim": Table((
        Column("network", "network"), Column("hardware", "hardware"), Column("simulator", "simulator"),
        Column("images", "images"), Column("result", "result"), Column("cycles", "cycles"),
        Column("cycles a frame (plan)", lambda r: _with(r, "frame_cycles", "plan_frame_cycles")),
        Column("time", "time"))),
    "network_synth": Table((
        Column("network", "network"), Column("hardware", "hardware"), Column("MULT18X18D", "dsps"),
        Column("DP16KD (plan)", lambda r: _with(r, "brams", "plan_brams")), Column("logic", "logic"),
        Column("FF", "ffs"), Column("seeds", "seeds"), Column("Fmax MHz (spread)", _fmax),
        Column("cycles a frame", "frame_cycles"), Column("frames/s", "fps", ",.0f"),
        Column("critical path", "critical_path"), Column("time", "time"))),
    "network_xc7": Table((
        Column("network", "network"), Column("part", "part"), Column("hardware", "hardware"),
        Column("DSP48E1", "dsps"), Column("RAMB18E1 halves (cells)", _xc7_brams),
        Column("as BRAM36", lambda r: fmt(r["brams"] / 2, ",.1f")), Column("logic (LUT6)", "logic"),
        Column("FF", "ffs"), Column("fits", "fits"), Column("post-synthesis", "postsynth"),
        Column("planned frames/s (clock)", lambda r: f"{fmt(r['planned_fps'], ',.1f')} ({r['planned_mhz']:g} MHz)"),
        Column("time", "time"))),
    "network_plans": Table((
        Column("network", "network"), Column("Winograd fps", "winograd_fps", ",.1f"),
        Column("its DSP", "winograd_dsp"), Column("its DP16KD", "winograd_bram"),
        Column("direct fps", "direct_fps", ",.1f"), Column("its DSP", "direct_dsp"),
        Column("speed-up", _times("speedup")),
        Column("within the direct DSP: fps", "equal_dsp_fps", ",.1f"), Column("its DSP", "equal_dsp_used"),
        Column("its speed-up", _times("equal_dsp_speedup")),
        Column("DSP for direct fps", _dsp_share)),
        rows="plans"),
    "network_fabric": Table((
        Column("network", "network"), Column("multipliers", "multipliers"),
        Column("planned frames/s", "fps", ",.1f"), Column("cycles a frame", "cycles"),
        Column("MULT18X18D", "dsp"), Column("DP16KD", "bram"), Column("logic (LUT4 + 2 x CCU2C)", "logic"),
        Column("in the fabric", "fabric_multipliers"), Column("direct-only plan: frames/s", "direct_fps", ",.1f")),
        rows="plans"),
    "fabric_multipliers": Table((
        Column("a x b (signed)", lambda r: f"{r['a']} x {r['b']}"), Column("tree registered", _tree),
        Column("fabric: logic", "fabric.logic"),
        Column("LUT4", "fabric.lut4"), Column("CCU2C", "fabric.ccu2c"), Column("FF", "fabric.ff"),
        Column("MULT18X18D", "fabric.dsp"), Column("Yosys -nodsp: logic", "nodsp.logic"),
        Column("planner's rule", "rule"),
        Column("rule / mapped", lambda r: f"{r['rule'] / r['fabric']['logic']:.2f}"))),
    "fabric_fmax": Table((
        Column("multipliers", "multipliers"), Column("built in", "kind"), Column("tree registered", _tree),
        Column("Fmax MHz (spread)", _fmax),
        Column("seeds", lambda r: " / ".join(f"{s:.1f}" for s in r["seeds"])))),
    "shortcut_fifos": Table((
        Column("network", "network"), Column("plan", "plan"), Column("fits", "fits"),
        Column("cycles a frame", "cycles"),
        Column("shortcut FIFOs, beats (of a frame)", lambda r: " / ".join(
            f"{fmt(a['beats'])} ({a['share']:.0%})" for a in r["adds"])),
        Column("their DP16KD (whole frames)", lambda r: f"{fmt(r['adds_bram'])} ({fmt(r['adds_bram_whole_frames'])})"),
        Column("plan DP16KD (whole frames)", lambda r: f"{fmt(r['plan_bram'])} ({fmt(r['plan_bram_whole_frames'])})"))),
    "unsigned_words": Table((
        Column("activation words", "words"), Column("V = B^T d bits", "v_bits"), Column("product bits", "product_bits"),
        Column("B^T adder bits", "bt_adder_bits"), Column("A^T adder bits", "at_adder_bits"),
        Column("logic (LUT4 + 2 x CCU2C)", "logic"), Column("MULT18X18D", "dsps"), Column("DP16KD", "brams"),
        Column("FF", "ffs"))),
    "network_quantised": Table((
        Column("network", "network"), Column("layer kinds", lambda r: ", ".join(r["kinds"])),
        Column("images", "images"), Column("onnxruntime mismatches", "mismatches"),
        Column("layers past 2**24", "float32_problems"), Column("seconds", "seconds"))),
    "network_large": Table((
        Column("network", "network"), Column("imported and planned", _seconds("seconds", ".1f")),
        Column("fits", "fits"), Column("DSP", "winograd_dsp"), Column("DP16KD", "winograd_bram"),
        Column("all-direct DSP", "direct_dsp"), Column("all-direct DP16KD", "direct_bram"),
        Column("verdict", "verdict")), rows="plans"),
    "line_buffers": Table((
        Column("buffering", "buffering"),
        Column("banks x words", lambda r: "" if "banks" not in r else f"{r['banks']:,} x {r['bank_words']:,}"),
        Column("words", "words"), Column("used", "used"))),
    "engine": Table((
        Column("layer", "layer"), Column("engine", "kind"), Column("DSP", "dsps"), Column("logic", "logic"),
        Column("FF", "ffs"), Column("DP16KD", "bram"), Column("DPR16X4", "lutram"),
        Column("cycles alone", "model_cycles"), Column("back to back", "model_period"),
        Column("MACs/DSP/cycle", "macs_per_dsp_cycle", ".2f"),
        Column("Fmax MHz (seeds 1 / 2 / 3)", lambda r: "" if "fmax" not in r else
               f"{r['fmax']:.1f} ({' / '.join(f'{s:.1f}' for s in r['fmax_seeds'])})"),
        Column("seed 1 unconstrained", "fmax_unconstrained", ".1f"),
        Column("GOPS/DSP", "gops_per_dsp", ".3f"))),
    "timing": Table((
        Column("geometry", "geometry"), Column("pipeline", "pipeline"), Column("design", "design"),
        Column("mults", "multipliers"), Column("DSP", "dsp"), Column("LUT4", "lut4"), Column("CCU2C", "ccu2c"),
        Column("logic", "logic"), Column("FF", "ff"), Column("latency", "latency"),
        Column("Fmax MHz", _tile_fmax), Column("spread", _tile_spread),
        Column("post-synthesis", lambda r: r["verify"] or "-")),
        lines=_tile_lines, notes=_not_placed),
    "postsynth_suite": Table((
        Column("pipeline", lambda r: f"`{r['pipeline']}`"), Column("geometries", "geometries"),
        Column("netlists", "netlists"), Column("result", "result"), Column("on Verilator", "verilator"))),
    "prove": Table((
        Column("width", lambda r: f"{r['width']}/{r['width']}"), Column("pipeline", "pipeline"),
        Column("proofs", "proofs"), Column("PROVEN", "proven"), Column("UNDECIDED", "undecided"),
        Column("DISPROVEN", "disproven"), Column("split multipliers", "split"),
        Column("median", _seconds("median_seconds", ".2f")),
        Column("slowest", _slowest))),
    "prove_extras": Table((
        Column("command", lambda r: f"`{r['command']}`"), Column("proofs", "proofs"), Column("result", "result"),
        Column("median", _seconds("median_seconds", ".1f")), Column("slowest", _seconds("slowest_seconds", ".1f")),
        Column("in all", _seconds("seconds", ","))),),
    "prove_mutants": Table((
        Column("command", lambda r: f"`bench/prove.py {r['command']}`"), Column("designs", "designs"),
        Column("mutants", "mutants"), Column("Yosys cannot read", "unreadable"), Column("DISPROVEN", "disproven"),
        Column("reproduced in Icarus", "icarus_reproduced"), Column("PROVEN", "proven"),
        Column("UNDECIDED", "undecided"), Column("unsound", "unsound"), Column("in all", _seconds("seconds", ",")))),
    "mining": Table((
        Column("geometry", "geometry"), Column("method", "method"), Column("budget", _seconds("budget", "g")),
        Column("proven", lambda r: f"{r['proven']}/{r['runs']}"),
        Column("to the proof (median)", _seconds("median_seconds", ".1f")),
        Column("slowest", _seconds("max_seconds", ".1f")),
        Column("to the card (median)", _seconds("median_card_seconds", ".1f")),
        Column("steps (ALS: starts)", "median_steps", ",g"),
        Column("adder bits", "best_adder_bits"), Column("constructive's", "constructive_adder_bits"),
        Column("by the cost", "best_vs_constructive"))),
    "sgd_throughput": Table((
        Column("geometry", "geometry"), Column("loss", "loss"), Column("steps", "steps"),
        Column("one start at a time (start-steps/s)", "one", ",.0f"),
        Column("starts at once", "starts"), Column("their start-steps/s", "batched", ",.0f"),
        Column("ratio", _times("ratio")), Column("device", "device"))),
    "pruning": Table((
        Column("example", "example"), Column("pruned", lambda r: f"{r['fraction']}%"), Column("method", "method"),
        Column("domain", "domain"), Column("removed", lambda r: f"{r['removed']:.2f}%"),
        Column("float after pruning", lambda r: f"{r['pruned_float']:.2f}%"),
        Column("after retraining", lambda r: f"{r['retrained_float']:.2f}%"),
        Column("int8", lambda r: _percent(r["int8"])),
        Column("products direct", lambda r: _products(r, "direct")),
        Column("products F(2x2,3x3)", lambda r: _products(r, "winograd")),
        Column("density per layer", "density")), notes=_pruning_sim),
    "pruning_hardware": Table((
        Column("example", "example"), Column("pruned", lambda r: f"{r['fraction']}%"), Column("method", "method"),
        Column("domain", "domain"), Column("int8", lambda r: _percent(r["int8"])),
        Column("smallest: multipliers", lambda r: _hw(r, "smallest", "multipliers")),
        Column("cycles a frame", lambda r: _hw(r, "smallest", "cycles")),
        Column("multiplier-cycles a frame", lambda r: _work(r, "smallest")),
        Column("weight bits", lambda r: _hw(r, "smallest", "weight_bits")),
        Column("all direct", lambda r: _work(r, "smallest direct")),
        Column("direct, zeros skipped", lambda r: _work(r, "smallest direct, zeros skipped")),
        Column("planned: frames/s", lambda r: _hw(r, "winograd", "fps", ",.0f")),
        Column("multipliers", lambda r: _hw(r, "winograd", "multipliers")),
        Column("multiplier-cycles", lambda r: _hw(r, "winograd", "mult_cycles")),
        Column("DP16KD", lambda r: _hw(r, "winograd", "bram")),
        Column("logic", lambda r: _hw(r, "winograd", "logic"))), notes=_networks),
    "pruning_zeros": Table((
        Column("example", "example"), Column("network", "network"), Column("layer", "layer"),
        Column("direct: activation 0", lambda r: _percent(r["direct_zero_activation"], ".1f")),
        Column("activation or weight 0", lambda r: _percent(r["direct_zero_either"], ".1f")),
        Column("Winograd: V = B^T d 0", lambda r: _percent(r["winograd_zero_activation"], ".1f")),
        Column("V or U 0", lambda r: _percent(r["winograd_zero_either"], ".1f")),
        Column("products/frame direct", "direct_products"), Column("Winograd", "winograd_products"))),
    "zeroskip": Table((
        Column("layer", "layer"), Column("engine", "engine"), Column("kernels", lambda r: "masked" if r["masked"] else "dense"),
        Column("multipliers", "multipliers"), Column("issues a tile", "issues_per_tile"), Column("period", "period", ","),
        Column("weight bits", "weight_bits", ","), Column("MULT18X18D", "mult18"), Column("DP16KD", "dp16kd"),
        Column("logic (planned)", lambda r: _with(r, "logic", "plan_logic")))),
    "gating": Table((
        Column("example", "example"), Column("engine", "engine"), Column("kind", lambda r: r.get("kind") or "-"),
        Column("zero data operands", lambda r: _percent(r.get("zero_operands_pct"), ".1f")),
        Column("data-operand toggles, gated / plain", lambda r: _ratio(r, "data")),
        Column("product toggles", lambda r: _ratio(r, "products")),
        Column("all toggles", lambda r: _ratio(r, "engine")),
        Column("cycles (both)", lambda r: f"{r['cycles_plain']:,}" if "cycles_plain" in r else "-"),
        Column("logic plain / gated", lambda r: _pair(r, "logic")), Column("FF plain / gated", lambda r: _pair(r, "ffs")))),
    "tile_memory": Table((
        Column("plan", "plan"), Column("planned frames/s", "fps", ",.1f"), Column("cycles a frame", "cycles"),
        Column("MULT18X18D", "dsp"), Column("DP16KD", "bram"), Column("logic (LUT4 + 2 x CCU2C)", "logic"),
        Column("FF", "ff"), Column("in the fabric", "fabric_multipliers"), Column("Winograd layers", "winograd"))),
    "flip_flops": Table((
        Column("plan", "plan"), Column("node", "node"), Column("algorithm", "algorithm"), Column("logic", "logic"),
        Column("MULT18X18D", "dsp"), Column("FF mapped", "mapped_ff"), Column("FF model", "model_ff"),
        Column("model error", lambda r: f"{100 * r['error']:+.0f}%"), Column("note", "note"))),
    "logic_packing": Table((
        Column("network", "network"), Column("plan logic (LUT RAM 4 / 6)", lambda r: f"{r['plan_logic']:,} / {r['plan_logic_6']:,}"),
        Column("LUT4", "lut4"), Column("CCU2C", "ccu2c"), Column("carry chains", "chains"),
        Column("TRELLIS_DPR16X4", "dpr16x4"), Column("LUT4 + 2 CCU2C + 4 chains + 6 DPR", "formula"),
        Column("TRELLIS_COMB", "comb"), Column("packed / planned (6)", lambda r: f"{r['comb'] / r['plan_logic_6']:.3f}"))),
    "roms": Table((
        Column("family", "family"), Column("ROM", lambda r: f"{r['depth']:,} x {r['width']}"), Column("bits", "bits"),
        Column("block RAM (mapped / plan)", lambda r: f"{r['mapped_bram']} / {r['plan_bram']}"),
        Column("LUT RAM cells", "mapped_lutram"),
        Column("logic (mapped / plan)", lambda r: f"{r['mapped_logic']:,} / {r['plan_logic']:,}"))),
    "tile_memory_yosys": Table((
        Column("engine", "engine"), Column("transformed tiles", "tiles"), Column("weights", "weights"),
        Column("DP16KD (plan)", lambda r: _with(r, "DP16KD", "plan_bram")),
        Column("TRELLIS_DPR16X4", "TRELLIS_DPR16X4"), Column("MULT18X18D", "MULT18X18D"),
        Column("logic (LUT4 + 2 x CCU2C)", "logic"), Column("FF", "ff"))),
    "cost": Table((
        Column("geometry", "name"), Column("constructive adder bits", "constructive.bits"),
        Column("search adder bits", "search.bits"), Column("constructive CCU2C", "constructive.ecp5.CCU2C"),
        Column("search CCU2C", "search.ecp5.CCU2C"), Column("constructive logic", "constructive.ecp5.logic"),
        Column("search logic", "search.ecp5.logic"))),
}


def names() -> list[str]:
    """The records under docs/results/."""
    return sorted(p.stem for p in RESULTS.glob("*.json"))


def load(name: str) -> dict:
    return json.loads((RESULTS / f"{name}.json").read_text())


def rows(name: str) -> list[dict]:
    """The record's rows (each with its stamp)."""
    return load(name)[TABLES[name].rows]


def cells(name: str) -> list[list[str]]:
    """The table as text cells: the head, then one list per line."""
    t = TABLES[name]
    columns = t.columns + tuple(Column(k, k) for k in STAMP)
    lines = [line for r in rows(name) for line in (t.lines(r) if t.lines else [r])]
    return [[c.head for c in columns]] + [[c.text(line).replace("|", "\\|") for c in columns] for line in lines]


def table(name: str) -> str:
    """The Markdown of one record's table, with its notes as a list under it."""
    if name not in TABLES:
        raise KeyError(f"docs/gen/results.py: no table for the record {name!r} (docs/results/{name}.json)")
    head, *body = cells(name)
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(line) + " |" for line in body]
    notes = TABLES[name].notes(rows(name)) if TABLES[name].notes else []
    return "\n".join(out + ([""] + [f"- {n}" for n in notes] if notes else []))


def marks(markdown: str) -> list[str]:
    """The records a page names, in order."""
    return MARK.findall(markdown)


def render(markdown: str) -> str:
    """The page with every ``<!-- results: NAME -->`` replaced by its table."""
    return MARK.sub(lambda m: table(m.group(1)), markdown)
