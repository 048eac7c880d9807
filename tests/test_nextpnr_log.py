"""synth/nextpnr_log.py: when nextpnr's router1 circles, read from its log as it grows."""

from __future__ import annotations

from synth.nextpnr_log import SLOW_BATCH_S, SLOW_BATCHES, RouterCircling

# router1's progress on the digits network (build logs of 2026-12-07): seed 1's placement, circling ...
CIRCLING = """\
Info:     165000 |    23312     137447 |  217   721 |      1350|       6.90     211.83|
Info:     166000 |    23554     138138 |  242   691 |       978|      20.30     232.13|
Info:     167000 |    23879     138813 |  325   675 |       891|      41.38     273.51|
Info:     168000 |    24239     139404 |  360   591 |       517|     118.41     391.92|
Info:     169000 |    24645     139980 |  406   576 |       389|     318.09     710.01|
Info:     170000 |    25092     140529 |  447   549 |       221|     511.59    1221.59|
"""
# ... and seed 2's placement, routed on its next route: one batch near the limit, a slow last one
FINISHED = """\
Info:     149000 |    18729     125959 |  254   708 |       667|      12.35     206.98|
Info:     150000 |    18975     126648 |  246   689 |       188|      52.84     259.82|
Info:     150410 |    19111     126899 |  136   251 |         0|      78.96     338.77|
Info: Routing complete.
Info: Router1 time 338.77s
"""


def test_three_slow_batches_in_a_row_are_circling():
    assert (SLOW_BATCH_S, SLOW_BATCHES) == (60.0, 3)
    watch = RouterCircling()
    lines = CIRCLING.splitlines(keepends=True)
    assert [watch(ln) for ln in lines[:-1]] == [""] * 5
    assert watch(lines[-1]) == "router1 circling: 3 batches of 1000 arcs over 60 s each, 221 arcs left after 1222 s"


def test_a_route_that_finishes_is_not_stopped():
    assert RouterCircling()(FINISHED) == ""


def test_a_fast_batch_between_slow_ones_starts_the_count_again():
    slow, fast = CIRCLING.splitlines(keepends=True)[-1], FINISHED.splitlines(keepends=True)[0]
    watch = RouterCircling()
    assert [watch(t) for t in (slow, slow, fast, slow, slow)] == [""] * 5
    assert watch(slow).startswith("router1 circling: 3 batches")


def test_a_line_split_between_two_reads_is_read_once_whole():
    watch = RouterCircling(slow_batch_s=100, slow_batches=1)
    text = CIRCLING.splitlines(keepends=True)[3]
    assert watch(text[:50]) == "" and watch(text[50:]) == ("router1 circling: 1 batch of 1000 arcs over 100 s, "
                                                           "517 arcs left after 392 s")
    assert RouterCircling()("placer output\nInfo: iter=552 steplen=1.83\n") == ""


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_batch_under_way_as_long_as_three_slow_ones_is_circling():
    clock = _Clock()
    watch = RouterCircling(clock=clock)
    assert watch(CIRCLING.splitlines(keepends=True)[0]) == ""
    clock.now = SLOW_BATCH_S * SLOW_BATCHES
    assert watch("") == ""
    clock.now += 1
    assert watch("") == "router1 circling: no batch of 1000 arcs done in 181 s, 1350 arcs left"


def test_after_the_route_is_complete_a_quiet_log_is_not_circling():
    """Timing analysis and the written netlist follow the last batch: minutes on ResNet-8."""
    clock = _Clock()
    watch = RouterCircling(clock=clock)
    assert watch(FINISHED) == ""
    clock.now = 3600
    assert watch("") == ""
