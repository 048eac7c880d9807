"""Skid (hdl/stream/skid.py): every beat in order with gaps and back-pressure, a beat a cycle when
nothing waits, and no combinational path from the output's tready to the input's."""

import pytest

from hdl.stream.skid import Skid
from winohdl.core.errors import WinohdlError

from stream_helpers import run_stream


@pytest.mark.parametrize("gaps, backpressure", [(0.0, 0.0), (0.3, 0.4), (0.0, 0.6)])
def test_skid_passes_every_beat_in_order(gaps, backpressure):
    beats = [((i * 37) % 512, int(i % 7 == 6)) for i in range(200)]
    got, cycles = run_stream(Skid(9), {"s_axis": beats}, "m_axis", len(beats), seed=3, gaps=gaps,
                             backpressure=backpressure)
    assert got == beats
    if not gaps and not backpressure:
        assert cycles == len(beats) + 1    # a beat a cycle, one register behind


def test_skid_refuses_no_bits():
    with pytest.raises(WinohdlError, match="at least 1"):
        Skid(0)
