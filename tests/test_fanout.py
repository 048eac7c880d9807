"""Fan-out of design points: a local process pool and a local Ray instance give the loop's results,
in order, and a point's error reaches the caller."""

import pytest

from winohdl.core.errors import WinohdlError
from winohdl.fanout import run_all


def design_rank(name: str) -> tuple[str, int, int]:
    """A tiny real point: generate the design of a suite geometry, report R and the tile latency."""
    from hdl.design import generate_design
    from hdl.options import HardwareOptions
    from miner.constructive import constructive_card
    from winohdl.core.suite import BY_NAME
    d = generate_design(constructive_card(BY_NAME[name].geometry), HardwareOptions.make(4, 4, "deep")).design
    return name, d.rank, d.latency


def fail_on_two(x: int) -> int:
    if x == 2:
        raise WinohdlError("point 2 is bad")
    return x


NAMES = ["f2_3", "f3_2", "s2_k3_o2", "f4_3"]


@pytest.fixture(scope="module")
def in_a_loop():
    """The points computed one after the other, here: what run_all must give back."""
    return [design_rank(n) for n in NAMES]


@pytest.mark.parametrize("jobs", [1, 2], ids=["inline", "pool"])
def test_points_come_back_in_order(jobs, in_a_loop):
    assert run_all(design_rank, NAMES, jobs=jobs) == in_a_loop


def test_ray_local_instance_runs_the_points():
    """Ray workers import functions by module: a product function (the test module is not on their path)."""
    import math
    assert run_all(math.factorial, [5, 3, 7, 1], ray_address="local") == [120, 6, 5040, 1]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_point_raises(jobs):
    with pytest.raises(WinohdlError, match="point 2 is bad"):
        run_all(fail_on_two, [1, 2, 3], jobs=jobs)


def test_bad_jobs():
    with pytest.raises(WinohdlError, match="--jobs must be >= 1"):
        run_all(fail_on_two, [1], jobs=0)


def test_after_jax_is_loaded_the_workers_start_without_a_fork():
    """JAX warns at (and may deadlock after) a fork of its threads: once it is loaded the pool starts its
    workers from a fresh server process, and nothing is said on stderr."""
    import subprocess
    import sys
    from pathlib import Path
    code = ("import jax, jax.numpy as jnp; jnp.zeros(2).block_until_ready(); "
            "from winohdl.fanout import run_all; print(run_all(abs, [-1, -2, 3], jobs=2))")
    done = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", code], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0 and done.stdout.strip() == "[1, 2, 3]", done.stderr
    assert "fork" not in done.stderr, done.stderr
