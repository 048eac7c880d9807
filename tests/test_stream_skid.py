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


@pytest.mark.slow(5)
def test_skid_handshakes_move_no_data_register(tmp_path):
    """After ECP5 synthesis, neither handshake reaches (through logic) the enable of a data register, only
    the pointers, the two count flags and the two slots' load flags (five flip-flops): a wide beat's
    slice does not fan a handshake out to every bit (132 and 133 flip-flops of Skid(64) with an output
    register and a spare). The input's tready is a flip-flop."""
    from amaranth.back import verilog

    from synth.yosys import synthesise
    from winohdl.core.netlist import YosysNetlist
    (tmp_path / "skid.v").write_text(verilog.convert(Skid(64), name="skid", emit_src=False))
    synthesise(tmp_path / "skid.v", "skid", "ecp5", tmp_path)
    net = YosysNetlist.load(tmp_path / "skid_ecp5_mapped.json", "skid")

    def flops_reached(port):
        return net.reached(net.ports[port]["bits"], ("TRELLIS_FF",))

    assert 1 <= len(flops_reached("m_axis__tready")) <= 5
    assert 1 <= len(flops_reached("s_axis__tvalid")) <= 5
    [bit] = net.ports["s_axis__tready"]["bits"]
    pin = net.drivers[bit]
    assert (net.cells[pin.cell]["type"], pin.port) == ("TRELLIS_FF", "Q")
