"""hdl/stream/requant.py: Requantise against its golden model (bias, per-channel rounding shift, saturation, ReLU)."""

import numpy as np
import pytest

from stream_helpers import frames_beats, lanes_of, run_stream

from hdl.stream.model import requantise_channels
from hdl.stream.requant import LATENCY, Requantise
from hdl.verilog import to_verilog
from winohdl.core.errors import WinohdlError
from winohdl.core.fixed import requantise


def check(C, L, in_width, bias, shift, relu, frames, seed=0, gaps=0.3, backpressure=0.3):
    dut = Requantise(L, in_width, bias, shift, relu)
    got, cycles = run_stream(dut, {"s_axis": frames_beats(frames, in_width, L)}, "m_axis",
                             sum(len(f) for f in frames) // L, seed=seed, gaps=gaps, backpressure=backpressure)
    want = np.concatenate([requantise_channels(np.reshape(f, (-1, C)), bias, shift, relu).ravel() for f in frames])
    assert lanes_of(got, 8, L) == want.tolist()
    n = 0
    for f in frames:
        n += len(f) // L
        assert got[n - 1][1] == 1
    assert sum(last for _, last in got) == len(frames)
    return cycles


@pytest.mark.parametrize("C,L", [(4, 1), (6, 2), (8, 8)], ids=["L1", "L2", "L=C"])
def test_random_two_frames_with_gaps_and_backpressure(C, L):
    rng = np.random.default_rng(C * 10 + L)
    w = 20
    bias = rng.integers(-3000, 3000, C).tolist()
    shift = rng.choice([-1, 0, 3, 7, 9], C).tolist()
    frames = [rng.integers(-(1 << (w - 1)), 1 << (w - 1), C * n).tolist() for n in (5, 3)]
    check(C, L, w, bias, shift, relu=False, frames=frames, seed=L)
    check(C, L, w, bias, shift, relu=True, frames=frames, seed=L + 1)


def test_ties_round_half_to_even_and_saturation_at_both_ends():
    # shift 2: x.5 ties go to the even neighbour, both signs; 12 bits reach past int8 both ways
    ties = [2, 6, 10, -2, -6, -10, 3, 5, -3, -5, 0, 1]
    ends = [2047, -2048, 127 * 4 + 1, 127 * 4 + 2, -128 * 4 - 2, -128 * 4 - 3, 511, -513, 4 * 127, -4 * 128, 0, 0]
    frame = ties + ends
    got = check(1, 1, 12, [0], [2], relu=False, frames=[frame], gaps=0.5, backpressure=0.5)
    assert got > 0
    assert requantise_channels(np.reshape(ties, (-1, 1)), [0], [2]).ravel().tolist() == \
        [0, 2, 2, 0, -2, -2, 1, 1, -1, -1, 0, 0]


def test_relu_bias_first_and_left_shifts():
    # bias added before the shift: -1 + 1 = 0 exactly; left shift by 3 saturates; ReLU clamps negatives
    frame = [-1, 20, -20, 5, 17, -100, 3, 4]
    check(2, 2, 8, [1, -4], [-3, 1], relu=True, frames=[frame])
    check(2, 1, 8, [1, -4], [-3, 1], relu=False, frames=[frame])


def test_one_beat_per_cycle_without_gaps():
    rng = np.random.default_rng(1)
    n = 64
    frame = rng.integers(-500, 500, 4 * n).tolist()
    cycles = check(4, 4, 10, [0, 1, 2, 3], [2, 2, 2, 2], relu=False, frames=[frame], gaps=0, backpressure=0)
    assert cycles == n + LATENCY + 2      # queue: memory write, output register


def test_large_table_uses_a_rom_and_converts():
    C, L = 64, 2
    rng = np.random.default_rng(2)
    bias, shift = rng.integers(-50, 50, C).tolist(), rng.choice([4, 5, 6], C).tolist()
    frame = rng.integers(-(1 << 15), 1 << 15, 2 * C).tolist()
    check(C, L, 16, bias, shift, relu=False, frames=[frame], gaps=0.2, backpressure=0.2)
    text = to_verilog(Requantise(L, 16, bias, shift), "requant")
    assert "module requant(" in text and "s_axis__tready" in text and "reg " in text


def multiplied_model(acc, bias, multiplier, shift, relu, bits=8):
    """The specification with a multiplier: ``requantise((acc + bias[c]) * M[c], shift[c])`` per channel."""
    acc = np.asarray(acc, dtype=np.int64)
    out = np.empty_like(acc)
    for c in range(acc.shape[-1]):
        out[..., c] = requantise((acc[..., c] + int(bias[c])) * int(multiplier[c]), int(shift[c]), bits, relu)
    return out


@pytest.mark.parametrize("C,L,relu,bits", [(4, 1, False, 8), (6, 2, True, 8), (4, 4, False, 8), (4, 2, True, 9)],
                         ids=["L1", "L2-relu", "L=C", "L2-unsigned-8-in-9-bits"])
def test_multiplier_before_the_shift(C, L, relu, bits):
    # trained scales: M of up to 20 bits and shifts of 24-27 (as winohdl.network.multiplier chooses them),
    # the accumulators reaching past the int8 range both ways, ties included (acc * M a multiple of 2**(s-1));
    # 9-bit words with the ReLU: an unsigned 8-bit activation, [0, 255] (a trained QuantReLU's)
    rng = np.random.default_rng(40 + C + L)
    w = 18
    mult = rng.integers(1 << 16, 1 << 20, C).tolist()
    shift = rng.choice([24, 26, 27], C).tolist()
    bias = rng.integers(-2000, 2000, C).tolist()
    frames = [rng.integers(-(1 << 15), 1 << 15, C * n).tolist() + [(1 << (w - 1)) - 1, -(1 << (w - 1))] * C
              for n in (6, 3)]
    dut = Requantise(L, w, bias, shift, relu, bits, multiplier=mult)
    assert dut.latency == LATENCY + 1
    got, _ = run_stream(dut, {"s_axis": frames_beats(frames, w, L)}, "m_axis", sum(len(f) for f in frames) // L,
                        seed=C, gaps=0.3, backpressure=0.3)
    want = np.concatenate([multiplied_model(np.reshape(f, (-1, C)), bias, mult, shift, relu, bits).ravel()
                           for f in frames])
    assert lanes_of(got, bits, L) == want.tolist()
    assert bits == 8 or want.max() == 255 and (want > 127).sum() > 3     # the unsigned top half is reached
    assert len(set(want.tolist())) > 12          # not all saturated: the products land inside int8


def test_multiplier_ties_round_half_to_even():
    # M = 3, shift 3: (acc * 3) / 8; acc = 4 gives 1.5 -> 2, acc = 20 gives 7.5 -> 8, acc = 12 gives 4.5 -> 4
    frame = [4, 12, 20, -4, -12, -20, 1, 0]
    dut = Requantise(1, 8, [0], [3], multiplier=[3])
    got, _ = run_stream(dut, {"s_axis": frames_beats([frame], 8, 1)}, "m_axis", len(frame), seed=0)
    assert lanes_of(got, 8, 1) == [2, 4, 8, -2, -4, -8, 0, 0]


@pytest.mark.parametrize("args,match", [
    ((3, 8, [0, 0], [1, 1]), "lanes do not divide"),
    ((1, 8, [0, 0], [1]), "2 biases and 1 shifts"),
    ((1, 0, [0], [1]), "in_width 0"),
    ((1, 8, [0, 0], [1, 1], False, 8, None, [3]), "1 multipliers for 2 channels"),
    ((1, 8, [0], [1], False, 8, None, [0]), "each at least 1"),
])
def test_bad_parameters(args, match):
    with pytest.raises(WinohdlError, match=match):
        Requantise(*args)
