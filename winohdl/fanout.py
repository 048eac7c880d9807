"""Fan-out of independent design points: a local process pool by default, or an existing Ray cluster.

A sweep of place-and-route runs outgrows one machine: ``run_all(fn, items, jobs, ray_address)``
maps a picklable top-level function over items and returns the results in order, through
``concurrent.futures.ProcessPoolExecutor`` (``jobs`` workers; 1 runs in this process) or, with
``ray_address``, Ray tasks on that cluster (``"local"`` starts a private local Ray instance).
An exception in a point is raised here, as it would be in a loop.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable, Sequence

from winohdl.core import progress
from winohdl.core.errors import WinohdlError


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def run_all(fn: Callable, items: Sequence, jobs: int = 1, ray_address: str | None = None,
            desc: str = "points") -> list:
    """``[fn(item) for item in items]``, in parallel (see the module docstring)."""
    if jobs < 1:
        raise WinohdlError(f"--jobs must be >= 1, got {jobs}")
    if ray_address is not None:
        return _run_ray(fn, items, ray_address, desc)
    if jobs == 1 or len(items) <= 1:
        out = []
        with progress.bar(len(items), desc, unit="point") as bar:
            for item in items:
                out.append(fn(item))
                bar.update(1)
        return out
    results: list = [None] * len(items)
    # JAX (a StableHLO model's factory) runs threads that a fork would copy half-held: start the workers
    # from a fresh server process instead once it is loaded
    context = multiprocessing.get_context("forkserver") if "jax" in sys.modules else None
    with ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=context) as pool, \
            progress.bar(len(items), desc, unit="point") as bar:
        futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
        for f in as_completed(futures):
            results[futures[f]] = f.result()
            bar.update(1)
    return results


def _call(fn: Callable, item):
    return fn(item)


def _run_ray(fn: Callable, items: Sequence, address: str, desc: str) -> list:
    try:
        import ray
    except ImportError:
        raise WinohdlError("--ray needs Ray: install it with 'pip install ray==2.60.0' "
                           "(or pip install -e '.[ray]')") from None
    started = not ray.is_initialized()
    if started:
        kwargs = dict(include_dashboard=False, log_to_driver=False)
        try:
            if address == "local":
                ray.init(num_cpus=default_jobs(), **kwargs)
            else:
                ray.init(address=address, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise WinohdlError(f"--ray {address}: cannot connect to a Ray cluster ({str(exc).splitlines()[0]})") \
                from None
    try:
        task = ray.remote(_call)  # ray.remote takes Python functions only, not builtins such as math.factorial
        refs = [task.remote(fn, item) for item in items]
        out = []
        with progress.bar(len(items), desc, unit="point") as bar:
            for ref in refs:
                out.append(ray.get(ref))
                bar.update(1)
        return out
    finally:
        if started:
            ray.shutdown()
