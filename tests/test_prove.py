"""The proof that a design folder's Verilog computes its declaration for every input (sim/prove/).

A sample of suite designs is proven (the whole suite is in bench/prove.py); a mutation
table edits the emitted Verilog text itself (never the generator) and states the verdict
each edit must get; counterexamples of a FAIL are replayed in Icarus. The building blocks
are checked against brute force on small boxes: exact ranges, the affine case analysis,
docs/interfaces.md's rounding definitions.
"""

from __future__ import annotations

import itertools
import random
import re
import shutil
from pathlib import Path

import pytest

from hdl.design import open_design
from hdl.options import HardwareOptions, Pipeline
from sim.prove import (Counterexample, Failure, NetlistError, ProofInputError, ProofReport, Verdict, format_proof,
                       prove_design, write_proof)
from sim.prove.netlist import Evaluator, Netlist, run_yosys
from sim.prove.polynomial import Poly, VarTable
from sim.prove.ranges import Ranges
from sim.prove.rounding import Aff, ConeChecker, Region, Split
from sim.prove.spec import HALF_EVEN, HALF_UP, TRUNCATE, convolution_taps, quantise_reference
from sim.tools import prepare_path
from winohdl.core.errors import WinohdlError
from winohdl.core.suite import BY_NAME

from artefacts import copy_of, design_folder

prepare_path()
HAVE_ICARUS = shutil.which("iverilog") is not None
assert HAVE_ICARUS, "Icarus Verilog is a requirement (make setup installs it): counterexamples replay in it"

W8 = HardwareOptions.make(8, 8, "none")
STAGES = HardwareOptions.make(8, 8, "stages")
ROUNDED = HardwareOptions.make(8, 8, "none", output_width=10, output_shift=4, rounding="round-half-even")


@pytest.fixture(scope="module")
def designs(tmp_path_factory):
    """Design folders (from the test cache) copied once per module, where the proofs write their
    reports: designs[(suite name, options)] -> folder."""
    copies = {}

    def get(name: str, options: HardwareOptions) -> Path:
        key = (name, options)
        if key not in copies:
            copies[key] = copy_of(design_folder(name, options),
                                  tmp_path_factory.mktemp(f"{name}_{options.tag}") / "design")
        return copies[key]
    return get


RUNS = itertools.count()


def prove(folder: Path, target: str = "wino", allow_edits: bool = False, icarus: bool = True):
    opened = open_design(folder, allow_edits=allow_edits)
    return prove_design(opened, target, work=folder.parent / f"prove_{target}_{next(RUNS)}", icarus=icarus)


# ---- proven designs (a sample; bench/prove.py runs the whole suite) ---------------------------------

@pytest.mark.parametrize("name,options,target", [
    ("f2_3", W8, "wino"),                     # smallest; exact division by 2 (a shift)
    ("f4_3", W8, "wino"),                     # odd divisors: multiplication by an inverse modulo 2^w
    ("f4_3", W8, "direct"),                   # the baseline with the same ports
    ("s2_k3_o2", STAGES, "wino"),             # stride, pipelined: latency 4 and the valid chain
    ("f2x2_3x3", W8, "wino"),                 # 2D
    ("f2x2_3x3", STAGES, "wino"),             # stages: a register between A^T's row-column passes
    ("f4_3", ROUNDED, "wino"),                # round-half-even and saturation: the case analysis
    ("f2_3", HardwareOptions.make(8, 8, "stages", "offline", output_width=9, output_shift=3,
                                  rounding="round-half-up"), "wino"),  # offline u = G_int g, rounded, pipelined
] + ([("f4_3", HardwareOptions.make(6, 5, "deep", output_width=8, output_shift=2, rounding="truncate"), "wino"),
      # deep registers the whole packed u port in one register: split into words to follow each value
      ("f2_3", HardwareOptions.make(8, 8, "deep", "offline", adders_per_stage=2), "wino")]
      if "deep" in {p.value for p in Pipeline} else []))
def test_design_is_proven(designs, name, options, target):
    folder = designs(name, options)
    r = prove(folder, target)
    assert r.verdict is Verdict.PROVEN, format_proof(r)
    assert r.cells > 0 and r.monomials > 0 and r.range_checks > 0 and not r.failures
    assert r.latency == open_design(folder).design.core(target).latency
    assert (r.latency > 0) == (options.pipeline.value != "none")
    assert r.exit_code == 0 and r.line().startswith(f"proof      {target:<6} PROVEN")
    assert r.line().endswith(f" range checks in {r.seconds:.1f} s")  # the time is reported, not bounded
    if options.output_width is not None:
        assert r.rounding_pieces > 0  # the rounding was proven by cases, not skipped


# The smallest designs whose deep pipeline splits a multiplier (an operand wider than a DSP block's 18 bits):
SPLIT_FABRIC = HardwareOptions.make(17, 17, "deep")  # F(2,3): u is 19 bits, its 1-bit chunk masks copies of v
SPLIT_BLOCK = HardwareOptions.make(17, 17, "deep")   # F(4,3): v is 21 bits, its 3-bit chunk has its own multiplier
SPLIT_DIRECT = HardwareOptions.make(19, 8, "deep")   # the direct baseline: d itself is 19 bits


@pytest.mark.parametrize("name,options,target", [("f2_3", SPLIT_FABRIC, "wino"), ("f4_3", SPLIT_BLOCK, "wino"),
                                                 ("f2_3", SPLIT_DIRECT, "direct")])
def test_split_multiplier_designs_are_proven(designs, name, options, target):
    """Chunks of an operand read as exact bit fields sum back to the product (sim/prove/fields.py)."""
    folder = designs(name, options)
    text = (folder / open_design(folder).design.core(target).verilog).read_text()
    assert re.search(r"\bp\d+_\d+_\d+_shift\b", text), "no partial products: the multiplier is not split"
    r = prove(folder, target)
    assert r.verdict is Verdict.PROVEN and not r.failures and not r.notes, format_proof(r)


def test_report_files_and_text(designs, tmp_path):
    r = prove(designs("f2_3", W8))
    txt = write_proof(tmp_path, r)
    assert txt.name == "proof_wino.txt" and (tmp_path / "proof_wino.json").is_file()
    import json
    data = json.loads((tmp_path / "proof_wino.json").read_text())
    assert data["verdict"] == "PROVEN" and data["monomials"] == 6 and data["failures"] == []
    text = format_proof(r)
    assert "claim" in text and "y(t) = conv(d, g)" in text and "PROVEN" in text


# ---- the mutation table: edits of the emitted Verilog text and the verdict each must get ------------

def _module(text: str, sub: str, edit) -> str:
    """Apply ``edit`` to the body of the submodule ``<top>.<sub>``; the edit must change something."""
    m = re.search(r"module \\[\w$]+\." + re.escape(sub) + r" \(.*?endmodule", text, re.S)
    assert m, f"no module {sub}"
    new = edit(m.group(0))
    assert new != m.group(0), f"the mutation found nothing to edit in {sub}"
    return text[:m.start()] + new + text[m.end():]


def adder_to_subtractor(text):
    """The first adder of the data transform becomes a subtractor."""
    return _module(text, "data_transform", lambda b: b.replace(") + $signed(", ") - $signed(", 1))


def width_cut(text):
    """The first operand slice of the output transform loses its top bit (its value needs it)."""
    def edit(b):
        m = re.search(r"\$signed\((\\\$\d+ )\[(\d+):0\]\)", b)
        return b[:m.start()] + f"$signed({m.group(1)}[{int(m.group(2)) - 1}:0])" + b[m.end():]
    return _module(text, "output_transform", edit)


def shift_off_by_one(text):
    """A shift by one in the output transform becomes a shift by two."""
    return _module(text, "output_transform", lambda b: re.sub(r"\{ (\S+), 1'h0 \}", r"{ \1, 2'h0 }", b, count=1))


def wrong_division_constant(text):
    """One adder of the multiplication by the odd divisor's inverse flips its sign: a wrong constant."""
    return _module(text, "division", lambda b: re.sub(
        r"(\\\$\d+ \[\d+:0\]\)) ([+-]) ", lambda m: m.group(1) + (" - " if m.group(2) == "+" else " + "), b, count=1))


def sign_fill_zero(text):
    """The sign fill of the exact shift right is forced to 0; the slice after it drops that bit anyway."""
    return _module(text, "division", lambda b: re.sub(r"\{ (\S+)\[(\d+)\], \1\[\2:1\] \}", r"{ 1'h0, \1[\2:1] }",
                                                      b, count=1))


def register_bypass(text):
    """The multiplier's first data-side operand is taken before its pipeline register, not after."""
    m = re.search(r"always @\(posedge clk\)\n\s+(v__e0) <= (\S+?) ?;", text)
    assert m, "no operand register v__e0"
    return text.replace(f".v__e0({m.group(1)})", f".v__e0({m.group(2)} )", 1)


def chain_register_bypass(text):
    """A delay register of the deep pipeline's data side reads the register before its predecessor:
    that path has one register fewer than the others."""
    m = re.search(r"v_q0_d2 <= v_q0_d1 ?;", text)
    assert m, "no delay chain v_q0"
    return text[:m.start()] + "v_q0_d2 <= v_q0_d0;" + text[m.end():]


def valid_early(text):
    """The last stage of the valid chain reads the first one: out_valid comes a cycle early."""
    return text.replace("? 1'h0 : valid1;", "? 1'h0 : valid0;", 1)


def sign_fill_observable(text):
    """The sign copy above a data word shifted left is forced to 0: a negative word turns positive
    (the proof sees the word read as unsigned, outside its bits: an overflow)."""
    return re.sub(r"\{ (\\\S+ )\[(\d+)\], \1\[\2:(\d+)\], (\d+)'h0 \}", r"{ 1'h0, \1[\2:\3], \4'h0 }", text, count=1)


def division_adder_flipped(text):
    """The first adder of the exact division (a multiplication by the inverse modulo 2^w, before the
    rounding logic) becomes a subtractor: the rounded output is wrong for some convolution values."""
    def edit(b):
        m = re.search(r"\) ([+-]) \$signed\(\\\$", b)
        return b[:m.start(1)] + ("-" if m.group(1) == "+" else "+") + b[m.end(1):]
    return _module(text, "division", edit)


def width_cut_undone(text):
    """A node of the output transform loses its top bit, but only its value modulo 2^17 reaches the
    output (the exact division multiplies by an inverse modulo 2^17): the same outputs, so proven."""
    return _module(text, "output_transform",
                   lambda b: b.replace("$signed(\\$3 [21:0]) - ", "$signed(\\$3 [20:0]) - ", 1))


def tie_rule_broken(text):
    """Round-half-even detects the tie at the wrong remainder."""
    return re.sub(r"\[3:0\] == 4'h8", "[3:0] == 4'h7", text, count=1)


def saturation_threshold_benign(text):
    """Saturate when above 510 instead of above 511: the same output (511 either way), so proven."""
    return text.replace("> $signed(10'h1ff)", "> $signed(10'h1fe)", 1)


def chunk_shift_off_by_one(text):
    """A partial product of a split multiplier is shifted one bit too far before the sum."""
    return _module(text, "multipliers", lambda b: re.sub(r"\{ (p\d+_\d+_\d+_d\d+), (\d+)'h0 \}",
                                                         lambda m: f"{{ {m.group(1)}, {int(m.group(2)) + 1}'h0 }}",
                                                         b, count=1))


def mask_one_bit_short(text):
    """The low unsigned chunk of a split operand loses its top bit."""
    return _module(text, "multipliers", lambda b: re.sub(r"\{ 1'h0, (\S+)\[(\d+):0\] \}",
                                                         lambda m: f"{{ 2'h0, {m.group(1)}[{int(m.group(2)) - 1}:0] }}",
                                                         b, count=1))


def partial_product_bypass(text):
    """The last register of one partial product reads the first: that partial product arrives a cycle early."""
    return _module(text, "multipliers", lambda b: re.sub(r"(p\d+_\d+_\d+)_d2 <= \1_d1 ?;", r"\1_d2 <= \1_d0;",
                                                         b, count=1))


DEEP = HardwareOptions.make(8, 8, "deep") if "deep" in {p.value for p in Pipeline} else None

MUTATIONS = [
    # (id, suite name, options, target, mutation, verdict, failure kind): the table first
    ("adder-to-subtractor", "f2_3", W8, "wino", adder_to_subtractor, Verdict.DISPROVEN, "coefficient"),
    ("width-cut", "f2_3", W8, "wino", width_cut, Verdict.DISPROVEN, "overflow"),
    ("shift-off-by-one", "f2_3", W8, "wino", shift_off_by_one, Verdict.DISPROVEN, "coefficient"),
    ("register-bypass", "f2_3", STAGES, "wino", register_bypass, Verdict.DISPROVEN, "coefficient"),
    ("wrong-division-constant", "f4_3", W8, "wino", wrong_division_constant, Verdict.DISPROVEN, "coefficient"),
    ("sign-fill-unobservable", "f2_3", W8, "wino", sign_fill_zero, Verdict.PROVEN, None),
    # beyond the table: the same edits elsewhere, and the valid chain
    ("sign-fill-observable", "f4_3", W8, "wino", sign_fill_observable, Verdict.DISPROVEN, "overflow"),
    ("valid-chain-early", "f2_3", STAGES, "wino", valid_early, Verdict.DISPROVEN, "coefficient"),
    ("direct-adder-to-subtractor", "f2_3", W8, "direct",
     lambda t: t.replace(") + $signed(", ") - $signed(", 1), Verdict.DISPROVEN, "coefficient"),
    ("width-cut-undone", "f4_3", W8, "wino", width_cut_undone, Verdict.PROVEN, None),
    ("division-adder-rounded", "f4_3", ROUNDED, "wino", division_adder_flipped, Verdict.DISPROVEN, "rounding"),
    ("rounding-tie", "f4_3", ROUNDED, "wino", tie_rule_broken, Verdict.DISPROVEN, "rounding"),
    ("saturation-benign", "f4_3", ROUNDED, "wino", saturation_threshold_benign, Verdict.PROVEN, None),
] + ([("deep-chain-bypass", "f2_3", DEEP, "wino", chain_register_bypass, Verdict.DISPROVEN, "coefficient"),
      # split multipliers: a chunk's shift, its slice, a partial product's register
      ("split-chunk-shift", "f4_3", SPLIT_BLOCK, "wino", chunk_shift_off_by_one, Verdict.DISPROVEN, "coefficient"),
      ("split-mask-short", "f4_3", SPLIT_BLOCK, "wino", mask_one_bit_short, Verdict.DISPROVEN, "coefficient"),
      ("split-partial-bypass", "f4_3", SPLIT_BLOCK, "wino", partial_product_bypass, Verdict.DISPROVEN,
       "coefficient"),
      ("split-fabric-bypass", "f2_3", SPLIT_FABRIC, "wino", partial_product_bypass, Verdict.DISPROVEN,
       "coefficient")]
     if DEEP is not None else [])


def mutated(designs, tmp_path, name, options, mutation, target="wino") -> Path:
    src = designs(name, options)
    folder = tmp_path / "design"
    shutil.copytree(src, folder)
    v = folder / open_design(folder).design.core(target).verilog
    text = v.read_text()
    new = mutation(text)
    assert new != text, "the mutation found nothing to edit"
    v.write_text(new)
    return folder


@pytest.mark.parametrize("name,options,target,mutation,verdict,kind", [m[1:] for m in MUTATIONS],
                         ids=[m[0] for m in MUTATIONS])
def test_mutation_table(designs, tmp_path, name, options, target, mutation, verdict, kind):
    """Each edit of the emitted Verilog text gets its verdict; a counterexample of a DISPROVEN one is
    confirmed on the Yosys netlist and reproduces in Icarus (the simulator reads the edited file)."""
    folder = mutated(designs, tmp_path, name, options, mutation, target)
    r = prove(folder, target, allow_edits=True, icarus=HAVE_ICARUS)
    assert r.verdict is verdict, format_proof(r)
    assert r.edited == (open_design(folder, allow_edits=True).design.core(target).verilog,)
    if verdict is Verdict.PROVEN:
        assert not r.failures and r.exit_code == 0
        return
    f = r.failures[0]
    assert f.kind == kind, format_proof(r)
    assert f.output == "out_valid" if mutation is valid_early else f.output.startswith("y["), format_proof(r)
    cx = f.counterexample
    assert cx is not None and cx.confirmed and cx.netlist != cx.expected
    assert r.exit_code == 1 and "DISPROVEN" in r.line()
    if kind == "coefficient":
        assert f.monomial and f.coefficient != f.expected_coefficient
    if kind == "overflow":
        assert f.cell and "outside" in f.message
    if HAVE_ICARUS:
        assert cx.icarus is not None, cx.icarus_note
        assert cx.icarus == cx.netlist != cx.expected and cx.icarus_confirmed
        assert "icarus" in format_proof(r)


def test_bypass_names_the_delays(designs, tmp_path):
    r = prove(mutated(designs, tmp_path, "f2_3", STAGES, register_bypass), allow_edits=True, icarus=False)
    f = r.failures[0]
    assert "@t-3" in f.monomial and "@t-4" in f.monomial and "latency is 4" in f.message
    assert len(f.counterexample.cycles) == 5  # a sequence: the inputs of two different cycles meet


def test_edited_file_needs_allow_edits(designs, tmp_path):
    folder = mutated(designs, tmp_path, "f2_3", W8, sign_fill_zero)
    with pytest.raises(WinohdlError, match="allow-edits"):
        open_design(folder)


# ---- bad input and what is not modelled ---------------------------------------------------------------

def test_verilog_yosys_cannot_read_is_bad_input(designs, tmp_path):
    folder = mutated(designs, tmp_path, "f2_3", W8, lambda t: t.replace("endmodule", "endmodul", 1))
    with pytest.raises(NetlistError, match="yosys cannot read"):
        prove(folder, allow_edits=True)


def test_ports_unlike_the_design_are_bad_input(designs, tmp_path):
    def extra_port(text):
        text = re.sub(r"^module (wino_\w+)\(", r"module \1(extra, ", text, count=1, flags=re.M)
        return text.replace("  input [31:0] d;", "  input [31:0] d;\n  input extra;", 1)
    folder = mutated(designs, tmp_path, "f2_3", W8, extra_port)
    with pytest.raises(ProofInputError, match="ports"):
        prove(folder, allow_edits=True)


def test_unknown_target(designs):
    with pytest.raises(WinohdlError, match="target"):
        prove(designs("f2_3", W8), "both")


def test_asynchronous_reset_is_undecided_not_proven(designs, tmp_path):
    def async_reset(text):
        m = re.search(r"always @\(posedge clk\)\n\s+(v__e0) <= (\S+?) ?;", text)
        assert m, "no operand register v__e0"
        new = f"always @(posedge clk or posedge rst)\n    if (rst) {m.group(1)} <= 0; else {m.group(1)} <= {m.group(2)} ;"
        return text[:m.start()] + new + text[m.end():]
    r = prove(mutated(designs, tmp_path, "f2_3", STAGES, async_reset), allow_edits=True, icarus=False)
    assert r.verdict is Verdict.UNDECIDED and r.exit_code == 1
    assert "not modelled" in r.notes[0]


# ---- the pieces against brute force ---------------------------------------------------------------------

def test_convolution_taps_match_the_geometry_tensor():
    for name in ("f2_3", "s2_k3_o2", "d2_k3_o4", "s21_3x3", "asym_2x3", "f2x2x2_3x3x3"):
        g = BY_NAME[name].geometry
        taps = convolution_taps(g.output, g.kernel, g.stride, g.dilation)
        mine = sorted((o, d, k) for o, row in enumerate(taps) for d, k in row)
        assert mine == sorted(map(tuple, g.triples.tolist()))


@pytest.mark.parametrize("y,shift,mode,width,want", [
    (5, 1, TRUNCATE, None, 5),            # no output width: exact
    (5, 1, TRUNCATE, 8, 2), (-5, 1, TRUNCATE, 8, -3),                      # floor
    (5, 1, HALF_UP, 8, 3), (-5, 1, HALF_UP, 8, -2), (6, 2, HALF_UP, 8, 2),  # floor(x + 1/2)
    (5, 1, HALF_EVEN, 8, 2), (7, 1, HALF_EVEN, 8, 4), (-5, 1, HALF_EVEN, 8, -2), (-7, 1, HALF_EVEN, 8, -4),
    (9, 2, HALF_EVEN, 8, 2), (11, 2, HALF_EVEN, 8, 3),
    (1000, 0, TRUNCATE, 8, 127), (-1000, 2, HALF_UP, 8, -128), (511, 1, HALF_EVEN, 8, 127),
])
def test_quantise_reference_follows_the_readme(y, shift, mode, width, want):
    assert quantise_reference(y, shift, mode, width) == want


@pytest.mark.parametrize("mode", [TRUNCATE, HALF_UP, HALF_EVEN])
@pytest.mark.parametrize("shift", [0, 1, 3])
def test_declared_pieces_equal_the_reference_everywhere(mode, shift):
    checker = ConeChecker.__new__(ConeChecker)
    checker.K = shift + 1
    width = 5
    for R in (Region(-9, 7, 0, (1 << checker.K) - 1), Region(-3, -3, 1, (1 << checker.K) - 1)):
        covered = set()
        for P, aff in checker.spec_pieces(R, shift, mode, width, 0):
            for t in range(P.t0, P.t1 + 1):
                for r in range(P.r0, P.r1 + 1):
                    assert (t, r) not in covered
                    covered.add((t, r))
                    y = (t << checker.K) + r
                    assert aff.at(t, r) == quantise_reference(y, shift, mode, width), (y, P)
        assert len(covered) == (R.t1 - R.t0 + 1) * (R.r1 - R.r0 + 1)


def _affine_ops(checker, R, v, k, n, signed):
    """floor_div and wrap on a region, splitting as the checker does, checked point by point."""
    stack = [R]
    while stack:
        checker.R = stack.pop()
        try:
            f = checker.floor_div(v, k)
            w = checker.wrap(v, n, signed)
        except Split as s:
            stack.extend(s.parts)
            continue
        P = checker.R
        for t in range(P.t0, P.t1 + 1):
            for r in range(P.r0, P.r1 + 1):
                x = v.at(t, r)
                assert f.at(t, r) == x >> k
                low = x & ((1 << n) - 1)
                assert w.at(t, r) == (low - (1 << n) if signed and low >> (n - 1) else low)


def test_affine_floor_and_wrap_match_brute_force():
    rng = random.Random(3)
    checker = ConeChecker.__new__(ConeChecker)
    checker.deficit = 0
    for _ in range(60):
        v = Aff(rng.choice([0, 4, 8, -8, 16, 3]), rng.choice([0, 1, -1, 2]), rng.randint(-40, 40))
        _affine_ops(checker, Region(rng.randint(-6, 0), rng.randint(0, 6), 0, 7), v, rng.randint(0, 4),
                    rng.randint(2, 6), rng.random() < 0.5)


def test_exact_ranges_match_brute_force():
    rng = random.Random(5)
    for _ in range(40):
        t = VarTable()
        d = [t.var("d", i, 0, -4, 3, 3) for i in range(3)]
        g = [t.var("g", k, 0, -2, 1, 2) for k in range(2)]
        p = Poly.const(rng.randint(-5, 5))
        for _ in range(rng.randint(1, 6)):
            a, b = Poly.var(rng.choice(d), rng.randint(-3, 3)), Poly.var(rng.choice(g), rng.randint(-3, 3))
            p = p + a.mul(b, t) + Poly.var(rng.choice(d + g), rng.randint(-2, 2))
        values = [p.evaluate(dict(zip(d + g, x)))
                  for x in itertools.product(*([range(-4, 4)] * 3 + [range(-2, 2)] * 2))]
        ranges = Ranges(t)
        r = ranges.range(p)
        assert (r.lo, r.hi) == (min(values), max(values))
        assert p.evaluate(r.hi_at) == r.hi and p.evaluate(r.lo_at) == r.lo
        lo, hi = ranges.bound(p)
        assert lo <= r.lo and r.hi <= hi
        for a, b in ((r.lo, r.hi), (r.lo + 1, r.hi), (r.lo, r.hi - 1)):
            fit = ranges.fits(p, a, b)
            assert fit.ok is (a <= min(values) and max(values) <= b)
            if fit.ok is False:
                assert not a <= p.evaluate(fit.witness) <= b


def test_an_unconfirmed_candidate_is_undecided_not_a_fail():
    """A candidate counterexample that the netlist replay refutes is printed as tried, under UNDECIDED."""
    refuted = Counterexample("y[0]", ({"d": [1, 0], "g": [0, 1]},), 0, 0)
    shown = Counterexample("y[1]", ({"d": [1, 0], "g": [0, 1]},), 0, 2)
    lines = []
    for cx, verdict in ((refuted, Verdict.UNDECIDED), (shown, Verdict.DISPROVEN)):
        f = Failure(cx.output, "coefficient", "not shown: y equals the convolution", "d[0]*g[1]", 0, 1, None,
                    "$dff at x.v:1.1-2.2", cx)
        r = ProofReport("t", "wino", "top", "x.v", verdict, 1, 1, 1, 0, 0, 2, 0, 0.1, "claim", failures=(f,))
        lines.append(format_proof(r))
    assert "FAIL" not in lines[0] and "UNDECIDED  y[0] [coefficient] not shown" in lines[0]
    assert "  tried     " in lines[0] and "  input" not in lines[0] and "  cell      $dff" in lines[0]
    assert "FAIL       y[1] [coefficient]" in lines[1] and "  input     " in lines[1]


def test_boolean_complements_keep_reset_chains_small():
    t = VarTable()
    iv = Poly.var(t.var("in_valid", 0, 5, 0, 1))
    chain = iv
    for k in range(1, 6):
        chain = chain.mul(Poly.var(t.var("rst", 0, k, 0, 1)).one_minus(t), t)
    assert len(chain) == 1  # not 2^5 monomials
    expanded = chain.canonical(t)
    assert len(expanded) == 32 and expanded.constant == 0
    r = t.var("rst", 0, 1, 0, 1)
    assert Poly.var(r).mul(Poly.var(t.complement(r)), t) == Poly()  # x * (1 - x) = 0


def test_evaluator_agrees_with_the_declaration_on_random_vectors(designs):
    """The concrete netlist evaluation that confirms counterexamples, on a proven design."""
    folder = designs("f4_3", ROUNDED)
    opened = open_design(folder)
    core = opened.design.winograd
    work = folder.parent / "eval"
    net = Netlist(run_yosys(opened.path(core.verilog), core.top, work), core.top,
                  {p.name: p.width for p in core.ports})
    ev = Evaluator(net)
    g = opened.design.geometry
    taps = convolution_taps(g.output, g.kernel, g.stride, g.dilation)
    rng = random.Random(1)
    o = opened.design.options
    for _ in range(100):
        d = [rng.randint(-128, 127) for _ in range(g.n_d)]
        k = [rng.choice([-128, 127, rng.randint(-128, 127)]) for _ in range(g.n_g)]
        pack = lambda ws: sum((x & 255) << (8 * i) for i, x in enumerate(ws))  # noqa: E731
        y = ev.cycle({"d": pack(d), "g": pack(k)})["y"]
        for i, row in enumerate(taps):
            word = (y >> (10 * i)) & 1023
            word -= (word >> 9) << 10
            want = quantise_reference(sum(d[a] * k[b] for a, b in row), o.output_shift, o.rounding.value,
                                      o.output_width)
            assert word == want
