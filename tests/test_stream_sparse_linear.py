"""hdl/stream/sparse_linear.py: the linear layer walking its non-zero weights, against the golden model, in
the cycles its walk takes."""

import numpy as np
import pytest

from stream_helpers import frames_beats, run_stream

from hdl.stream.axis import unpack
from hdl.stream.model import linear
from hdl.stream.sparse_linear import ColumnWalk, SparseLinear
from hdl.verilog import to_verilog
from winohdl.core.errors import WinohdlError


def check(W, bias, L, Q, inputs, seed=0, gaps=0.3, backpressure=0.3):
    dut = SparseLinear(W, bias, L, Q)
    M = len(bias)
    got, cycles = run_stream(dut, {"s_axis": frames_beats(inputs, 8, L)}, "m_axis", len(inputs),
                             seed=seed, gaps=gaps, backpressure=backpressure, max_cycles=50_000)
    for (data, last), x in zip(got, inputs):
        logits, best = linear(x, W, bias)
        assert unpack(data, dut.logit_width, M) == logits.tolist() and last == 1
        assert data >> (M * dut.logit_width) == best
    return dut, cycles


def sparse(rng, M, N, density):
    return np.where(rng.random((M, N)) < density, rng.integers(-128, 128, (M, N)), 0)


@pytest.mark.parametrize("M,N,L,Q,density", [(10, 12, 1, 2, 0.2), (4, 6, 2, 1, 0.5), (6, 8, 4, 3, 0.3),
                                             (3, 5, 1, 4, 1.0), (2, 4, 1, 1, 0.0)],
                         ids=["L1_Q2", "L2_Q1", "L4_Q3", "dense_Q_above_M", "all_zero"])
def test_random_sparse_frames(M, N, L, Q, density):
    rng = np.random.default_rng(M * N + L + Q)
    W = sparse(rng, M, N, density)
    bias = rng.integers(-5000, 5000, M).tolist()
    check(W, bias, L, Q, [rng.integers(-128, 128, N) for _ in range(3)], seed=Q)


def test_the_walk_takes_a_cycle_per_q_non_zeros_of_a_column():
    W = np.array([[1, 0, 0, 2], [3, 0, 0, 4], [5, 0, 6, 0]])
    walk = ColumnWalk.make(W, 2)
    assert walk.entries == ((0, (0, 1)), (0, (2, -1)), (2, (2, -1)), (3, (0, 1)))
    assert ColumnWalk.cycles(W, 2) == 4 and ColumnWalk.cycles(W, 3) == 3 and ColumnWalk.cycles(W * 0, 2) == 1
    assert ColumnWalk.make(W * 0, 2).entries == ((0, (-1, -1)),)


def test_frames_take_the_walks_cycles():
    """Back to back without gaps: a frame every max(N / L, entries) cycles, so a sparse matrix's frames stream
    at the input's pace, and the unit is bit-exact there too (extremes: the widest logits)."""
    rng = np.random.default_rng(5)
    M, N = 10, 32
    W = sparse(rng, M, N, 0.15)
    W[0, 0], W[1, 0] = -128, 127
    x = [np.full(N, -128), np.full(N, 127)] + [rng.integers(-128, 128, N) for _ in range(4)]
    entries = ColumnWalk.cycles(W, 2)
    _, cycles = check(W, [3] * M, 1, 2, x, gaps=0, backpressure=0)
    period = max(N, entries)
    assert 6 * period <= cycles <= 6 * period + N + 20, (entries, cycles)


def test_verilog():
    rng = np.random.default_rng(3)
    text = to_verilog(SparseLinear(sparse(rng, 4, 8, 0.3), [1, 2, 3, 4], 2, 2), "linear")
    assert "module linear(" in text and "m_axis__tdata" in text


@pytest.mark.parametrize("args,match", [
    (([[1, 2, 3]], [0], 2, 1), "lanes divide N"),
    (([[1, 2]], [0], 1, 0), "multipliers must be a whole number >= 1"),
    (([[200, 2]], [0]), "do not fit 8 bits"),
    (([[1, 2]], [0, 1]), "2 biases"),
])
def test_bad_parameters(args, match):
    with pytest.raises(WinohdlError, match=match):
        SparseLinear(*args)
