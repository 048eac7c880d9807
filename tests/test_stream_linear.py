"""hdl/stream/linear.py: Linear + arg-max against its golden model, exact logits and ties."""

import re

import numpy as np
import pytest

from stream_helpers import frames_beats, run_stream

from hdl.stream.axis import unpack
from hdl.stream.linear import OPERAND, Linear
from hdl.stream.model import linear
from hdl.verilog import to_verilog
from synth.yosys import synthesise
from winohdl.core.netlist import YosysNetlist
from winohdl.core.errors import WinohdlError


def check(W, bias, L, P, inputs, seed=0, gaps=0.3, backpressure=0.3):
    dut = Linear(W, bias, L, P)
    M = len(bias)
    got, cycles = run_stream(dut, {"s_axis": frames_beats(inputs, 8, L)}, "m_axis", len(inputs) * M // P,
                             seed=seed, gaps=gaps, backpressure=backpressure, max_cycles=50_000)
    per = M // P
    for f, x in enumerate(inputs):
        logits, best = linear(x, W, bias)
        beats = got[f * per:(f + 1) * per]
        assert [v for data, _ in beats for v in unpack(data, dut.logit_width, P)] == logits.tolist()
        assert [last for _, last in beats] == [0] * (per - 1) + [1]
        index = beats[-1][0] >> (P * dut.logit_width)
        assert index == best
    return dut, cycles


@pytest.mark.parametrize("M,N,L,P", [(4, 6, 1, 1), (6, 8, 2, 3), (4, 4, 4, 4), (10, 12, 3, 2), (2, 1, 1, 1)],
                         ids=["L1_P1", "L2_P3", "L=N_P=M", "L3_P2", "one_input"])
def test_random_two_frames(M, N, L, P):
    rng = np.random.default_rng(M * N + L)
    W = rng.integers(-128, 128, (M, N))
    bias = rng.integers(-5000, 5000, M).tolist()
    inputs = [rng.integers(-128, 128, N) for _ in range(2)]
    check(W, bias, L, P, inputs, seed=L)


def test_extreme_logits_fit_the_computed_width():
    # every weight -128 and every input -128: the largest positive logit; and the most negative
    M, N = 2, 5
    W = np.array([[-128] * N, [127] * N])
    bias = [7, -7]
    dut, _ = check(W, bias, 1, 2, [np.full(N, -128), np.full(N, 127)])
    assert dut.logit_range.hi == N * 128 * 128 + 7 and dut.logit_range.lo == -N * 127 * 128 - 7
    assert dut.logit_width == 18


def test_ties_go_to_the_lowest_index():
    # classes 1, 3 and 4 tie for the largest logit, across lanes and across beats
    W = np.array([[1, 0], [2, 0], [0, 0], [2, 0], [2, 0], [-1, 0]])
    bias = [0, 0, 2, 0, 0, 0]
    x = np.array([1, 5])
    logits, best = linear(x, W, bias)
    assert logits.tolist() == [1, 2, 2, 2, 2, -1] and best == 1
    for P in (1, 2, 3, 6):
        check(W, bias, 2, P, [x], seed=P)
    # the tie inside a beat on the first lane, the later beat larger
    check(W, [0, 0, 0, 0, 5, 0], 1, 2, [x])


def test_frames_overlap_the_double_buffer():
    rng = np.random.default_rng(9)
    M, N = 2, 16
    W, bias = rng.integers(-128, 128, (M, N)), [0, 0]
    inputs = [rng.integers(-128, 128, N) for _ in range(3)]
    _, cycles = check(W, bias, 1, 2, inputs, gaps=0, backpressure=0)
    # one pass of N cycles a frame, input N beats a frame: the frames stream back to back (after the first
    # frame's N beats in and its way through the unit)
    assert cycles <= 3 * N + N + 11 + OPERAND, cycles


def test_verilog():
    rng = np.random.default_rng(3)
    text = to_verilog(Linear(rng.integers(-128, 128, (4, 8)), [1, 2, 3, 4], 2, 2), "linear")
    assert "module linear(" in text and "m_axis__tdata" in text


@pytest.mark.parametrize("args,match", [
    (([[1, 2, 3]], [0], 2, 1), "lanes divide N"),
    (([[1, 2], [3, 4]], [0, 0], 1, 3), "multipliers divide M"),
    (([[200, 2]], [0]), "do not fit 8 bits"),
    (([[1, 2]], [0, 1]), "2 biases"),
])
def test_bad_parameters(args, match):
    with pytest.raises(WinohdlError, match=match):
        Linear(*args)


@pytest.mark.slow(10)
def test_flags_copied_per_accumulator_survive_synthesis(tmp_path):
    """Each accumulator's valid and first-word flags are its own flip-flops after Yosys, and the input word
    has a copy per two multipliers (identical registers, which opt_merge would fold into one routed to every
    accumulator or block without ``keep``)."""
    rng = np.random.default_rng(4)
    P = 3
    v = tmp_path / "linear.v"
    v.write_text(to_verilog(Linear(rng.integers(-128, 128, (6, 8)), [1, 2, 3, 4, 5, 6], 2, P), "linear"))
    synthesise(v, "linear", "ecp5", tmp_path)
    ffs = YosysNetlist.load(tmp_path / "linear_ecp5_mapped.json", "linear").of_type("TRELLIS_FF")
    for flag in ("valid", "first"):
        assert sorted(c for c in ffs if re.fullmatch(rf"{flag}_c\d_TRELLIS_FF_Q", c)) == \
            [f"{flag}_c{i}_TRELLIS_FF_Q" for i in range(P)]
    # the input word's copies, one per two multipliers, each of its 8 bits (their registers go into the blocks)
    assert len([c for c in ffs if re.fullmatch(r"x_c\d_TRELLIS_FF_Q(_\d+)?", c)]) == 2 * 8
