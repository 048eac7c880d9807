"""hdl/stream/pool.py: MaxPool, AvgPool and GlobalAvgPool against their golden models, beat for beat."""

import numpy as np
import pytest

from stream_helpers import frames_beats, lanes_of, run_stream

from hdl.stream.model import avg_pool, global_avg_pool, max_pool
from hdl.stream.pool import AvgPool, GlobalAvgPool, MaxPool, PoolShape
from hdl.verilog import to_verilog
from winohdl.core.errors import WinohdlError


def run(dut, frames, L, out_per_frame, seed=0, gaps=0.3, backpressure=0.3, bits=8):
    n_out = out_per_frame * len(frames) // L
    got, cycles = run_stream(dut, {"s_axis": frames_beats([f.ravel() for f in frames], 8, L)}, "m_axis", n_out,
                             seed=seed, gaps=gaps, backpressure=backpressure)
    lasts = [i for i, (_, last) in enumerate(got) if last]
    assert lasts == [(f + 1) * out_per_frame // L - 1 for f in range(len(frames))]
    return lanes_of(got, bits, L), cycles


def maps(shape, n, seed, lo=-128, hi=128):
    rng = np.random.default_rng(seed)
    return [rng.integers(lo, hi, (shape.height, shape.width, shape.channels)) for _ in range(n)]


# (H, W, C, L, kernel, stride, padding), why
MAX_CASES = {
    "3x3s2p1_odd_padding_every_edge": (5, 7, 4, 2, 3, 2, 1),
    "2x2s2_L=C": (4, 6, 3, 3, 2, 2, 0),
    "2x2s2_odd_rows_and_columns_unused": (5, 5, 2, 1, 2, 2, 0),
    "3x3s1p1_slow_path_L1": (4, 5, 2, 1, 3, 1, 1),
    "1x1s1": (2, 3, 2, 2, 1, 1, 0),
    "3x3s3_map_smaller_than_buffer": (3, 3, 2, 1, 3, 3, 0),
}


@pytest.mark.parametrize("case", MAX_CASES.values(), ids=MAX_CASES.keys())
def test_max_pool_two_frames(case):
    shape = PoolShape(*case)
    frames = maps(shape, 2, sum(case))
    # a window that is all minimum values next to padding: padding must not win
    frames[0][:2, :2] = -128
    n_out = shape.out_height * shape.out_width * shape.channels
    got, _ = run(MaxPool(shape), frames, shape.lanes, n_out, seed=len(case))
    want = np.concatenate([max_pool(f, shape.kernel, shape.stride, shape.padding).ravel() for f in frames])
    assert got == want.tolist()


AVG_CASES = {
    "2x2s2": ((4, 4, 4, 2, 2, 2, 0), 0),
    "2x2s1p1_padding_every_edge_L1": ((3, 5, 2, 1, 2, 1, 1), 0),
    "4x4s2p2_extra_left_shift_saturates": ((6, 6, 2, 2, 4, 2, 2), -5),
    "2x2s2_extra_shift_L=C": ((4, 6, 3, 3, 2, 2, 0), 2),
}


@pytest.mark.parametrize("case,extra", AVG_CASES.values(), ids=AVG_CASES.keys())
def test_avg_pool_two_frames(case, extra):
    shape = PoolShape(*case)
    frames = maps(shape, 2, sum(case))
    got, _ = run(AvgPool(shape, extra), frames, shape.lanes, shape.out_height * shape.out_width * shape.channels,
                 seed=extra)
    want = np.concatenate([avg_pool(f, shape.kernel, shape.stride, shape.padding, extra).ravel() for f in frames])
    assert got == want.tolist()
    if extra < 0:
        assert want.min() == -128 and want.max() == 127       # saturated at both ends


def test_avg_pool_ties_round_half_to_even():
    # 2x2 windows summing to 2, 6, -2, -6 (x.5 after the shift by 2, to even), then 1 and 3
    frame = np.zeros((2, 12, 1), dtype=np.int64)
    frame[0, :, 0] = [1, 1, 3, 3, -1, -1, -3, -3, 0, 1, 1, 2]
    shape = PoolShape(2, 12, 1, 1, 2, 2, 0)
    got, _ = run(AvgPool(shape), [frame], 1, 6)
    assert got == [0, 2, 0, -2, 0, 1] == avg_pool(frame, 2, 2, 0).ravel().tolist()


def test_max_pool_one_input_beat_per_cycle():
    shape = PoolShape(8, 8, 4, 2, 2, 2, 0)
    frames = maps(shape, 2, 5)
    n_in = 2 * 8 * 8 * 2
    pool = MaxPool(shape)
    levels = pool.column_levels
    _, cycles = run(pool, frames, 2, 4 * 4 * 4, gaps=0, backpressure=0)
    # input rate bound; the walker finishes each frame's last output row before the next frame
    # starts (not overlapped): a row of 4 outputs x 2 beats x 2 columns, twice, plus the pipeline
    assert cycles <= n_in + 2 * 16 + 10 + levels, cycles


@pytest.mark.parametrize("H,W,C,L,extra", [(4, 4, 6, 2, 0), (2, 4, 3, 1, 1), (4, 2, 4, 4, -4), (1, 1, 2, 2, 0)],
                         ids=["4x4_L2", "2x4_L1", "4x2_L=C_saturates", "1x1"])
def test_global_avg_pool_two_frames(H, W, C, L, extra):
    rng = np.random.default_rng(H * W + C)
    frames = [rng.integers(-128, 128, (H, W, C)) for _ in range(2)]
    got, cycles = run(GlobalAvgPool(H, W, C, L, extra), frames, L, C, seed=C)
    want = np.concatenate([global_avg_pool(f, extra) for f in frames])
    assert got == want.tolist()
    _, cycles = run(GlobalAvgPool(H, W, C, L, extra), frames, L, C, gaps=0, backpressure=0)
    assert cycles == 2 * H * W * C // L + 3 + 2


@pytest.mark.parametrize("H,W,C,L,extra", [(3, 3, 4, 2, 4), (7, 7, 2, 1, 6), (3, 5, 3, 3, 2)],
                         ids=["3x3_L2", "7x7_L1", "3x5_L=C"])
def test_global_sum_any_map(H, W, C, L, extra):
    """``divide=False``: the sum over any map (no power of two), shifted by ``extra`` alone."""
    rng = np.random.default_rng(H * W * C)
    frames = [rng.integers(-128, 128, (H, W, C)) for _ in range(2)]
    got, _ = run(GlobalAvgPool(H, W, C, L, extra, divide=False), frames, L, C, seed=H)
    want = np.concatenate([global_avg_pool(f, extra, divide=False) for f in frames])
    assert got == want.tolist()
    assert want.tolist() == np.concatenate([np.clip(np.round(f.sum(axis=(0, 1)) / 2 ** extra), -128, 127)
                                            for f in frames]).astype(int).tolist()


@pytest.mark.parametrize("H,W,C,L", [(3, 3, 4, 2), (8, 8, 2, 1)], ids=["3x3_L2", "8x8_L1"])
def test_global_average_with_a_trained_multiplier(H, W, C, L):
    """Trained scales: the sum times ``M`` (1/(H*W) in it), then the rounding shift, over any map."""
    from winohdl.core.fixed import shift_round
    M, shift = 6065, 17
    rng = np.random.default_rng(H + C)
    frames = [rng.integers(-128, 128, (H, W, C)) for _ in range(2)]
    frames[1][..., 0] = 127                          # 8x8: 127 * 64 * 6065 / 2**17 = 376, saturated to 127
    unit = GlobalAvgPool(H, W, C, L, shift, divide=False, multiplier=M)
    got, _ = run(unit, frames, L, C, seed=H)
    want = np.concatenate([np.clip(shift_round(f.sum(axis=(0, 1)) * M, shift), -128, 127) for f in frames])
    assert got == want.tolist() and want[C] == min(127, shift_round(127 * H * W * M, shift))


def test_global_avg_pool_ties_and_ends():
    # 2x2 sums 2 and 6 over 4 pixels: 0.5 -> 0, 1.5 -> 2; all 127s and all -128s stay there
    frame = np.array([[[1, 3, 127, -128], [1, 3, 127, -128]], [[0, 0, 127, -128], [0, 0, 127, -128]]])
    got, _ = run(GlobalAvgPool(2, 2, 4, 2), [frame], 2, 4)
    assert got == [0, 2, 127, -128] == global_avg_pool(frame).tolist()


def test_verilog():
    for name, unit in [("maxpool", MaxPool(PoolShape(5, 5, 4, 2, 3, 2, 1))),
                       ("avgpool", AvgPool(PoolShape(4, 4, 4, 2, 2, 2, 0), 1)),
                       ("gap", GlobalAvgPool(4, 4, 8, 2))]:
        text = to_verilog(unit, name)
        assert f"module {name}(" in text and "m_axis__tlast" in text


@pytest.mark.parametrize("make,match", [
    (lambda: PoolShape(4, 4, 4, 3, 2, 2), "3 lanes do not divide 4 channels"),
    (lambda: PoolShape(4, 4, 4, 1, 3, 2, 2), "padding 2 is more than half the kernel 3"),
    (lambda: PoolShape(2, 4, 4, 1, 3, 1, 0), "kernel 3 larger than the padded 2x4 map"),
    (lambda: PoolShape(0, 4, 4, 1, 3, 1, 0), "at least 1"),
    (lambda: AvgPool(PoolShape(6, 6, 4, 1, 3, 2, 1)), "count 9 is not a power of two"),
    (lambda: GlobalAvgPool(3, 3, 4, 1), "H\\*W = 9 is not a power of two"),
])
def test_bad_parameters(make, match):
    with pytest.raises(WinohdlError, match=match):
        make()


@pytest.mark.parametrize("case", [(5, 6, 4, 2, 3, 1, 1), (6, 6, 2, 1, 3, 3, 0)], ids=["3x3s1p1_L2", "3x3s3_L1"])
def test_avg_pool_with_a_trained_multiplier(case):
    """Trained scales: a 3x3 window (9 values: no shift divides) summed, times ``M``, shifted by ``extra``."""
    from hdl.stream.model import pool_windows
    from winohdl.core.fixed import shift_round
    shape, M, extra = PoolShape(*case), 6065, 15
    frames = maps(shape, 2, sum(case))
    frames[1][:] = 127                                    # saturates: 9 * 127 * 6065 / 2**15 = 211
    got, _ = run(AvgPool(shape, extra, multiplier=M), frames, shape.lanes,
                 shape.out_height * shape.out_width * shape.channels, seed=1)
    sums = [pool_windows(f, shape.kernel, shape.stride, shape.padding, 0).sum(axis=(2, 3)) for f in frames]
    want = np.concatenate([np.clip(shift_round(s * M, extra), -128, 127).ravel() for s in sums])
    assert got == want.tolist() and want.max() == 127 and len(set(want.tolist())) > 5
