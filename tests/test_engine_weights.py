"""Weight memories that hold the kernels g, each transformed as it is read (:class:`hdl.engine.modes.WeightStore`):
bit-exact streams, the memories they build, and the options they need."""

import pytest

from hdl.engine.engine import LayerEngine
from hdl.engine.model import EngineModel
from hdl.engine.options import EngineOptions
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry
from winohdl.core.words import pack

from engine_helpers import SERIAL_IN, amaranth_run, build_engine, serial_frames_exact


@pytest.mark.parametrize("case", [SERIAL_IN[0], SERIAL_IN[2], SERIAL_IN[5]], ids=["f2x2", "s2_pk2pc2", "f4x4_shared"])
@pytest.mark.slow(10)
def test_kernels_stored_and_transformed_as_read(case):
    """Weight memories holding g, each kernel transformed as it is read (``weight_store`` kernels): one
    memory of |g| words per live lane instead of R words per fibre, staggered fibres served through
    registers; bit-exact with gaps, back-pressure and extremes (kernels loaded through the port and
    preloaded), and the performance model cycle for cycle."""
    geo, F, P, C, K, PK, PC, pipeline = case
    o = EngineOptions(Geometry.parse(*geo), C, K, F, P, PK, PC, pipeline=pipeline, input_transform="serial",
                      kernel_transform="hw", weight_store="kernels")
    dp, plan, eng = build_engine(o, "winograd")
    assert plan.staggered and plan.kernel_read_cycles > 0
    (weights,) = [mem for mem in plan.memories if mem.name == "weights"]
    assert (weights.count, weights.width) == (o.PK * o.PC, o.geometry.n_g * o.kernel_width)
    layers, _ = serial_frames_exact(o, dp, plan, eng)
    model = EngineModel(o, dp, "winograd")
    (x0, w0), (x1, w1) = layers[:2]
    preloaded = LayerEngine(plan, weights=[pack(b, plan.w_width) for b in model.weight_beats(w0)])
    got, _ = amaranth_run(preloaded, [(x0, None), (x1, w1)], seed=5, gaps=0.2, backpressure=0.2)
    assert got == [model.output_beats(x0, w0), model.output_beats(x1, w1)]


def test_kernels_stored_need_the_kernels_on_the_port():
    with pytest.raises(WinohdlError, match="kernel transform 'hw'"):
        EngineOptions(Geometry.parse("2x2", "3x3"), 2, 2, (5, 5), (1, 1), weight_store="kernels")
