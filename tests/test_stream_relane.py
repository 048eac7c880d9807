"""Relane (hdl/stream/relane.py): words keep their order and tlast its word, splitting and gathering,
with gaps and back-pressure."""

import pytest

from hdl.stream.relane import Relane
from winohdl.core.errors import WinohdlError

from stream_helpers import beats, run_stream


@pytest.mark.parametrize("lanes_in, lanes_out", [(4, 1), (4, 2), (1, 4), (2, 4), (3, 1)])
def test_relane_keeps_the_words_in_order(lanes_in, lanes_out):
    words = [(i * 37) % 256 for i in range(48)]
    frames = [beats(words[:24], 8, lanes_in), beats(words[24:], 8, lanes_in)]
    got, _ = run_stream(Relane(lanes_in, lanes_out, 8), {"s_axis": frames[0] + frames[1]}, "m_axis",
                        48 // lanes_out, seed=3, gaps=0.3, backpressure=0.3)
    want = beats(words[:24], 8, lanes_out) + beats(words[24:], 8, lanes_out)
    assert got == want


def test_relane_refuses_lanes_that_do_not_divide():
    with pytest.raises(WinohdlError, match="one must divide the other"):
        Relane(2, 3, 8)
    with pytest.raises(WinohdlError, match="must differ"):
        Relane(2, 2, 8)
