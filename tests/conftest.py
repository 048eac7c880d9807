import os

import pytest
import torch

from artefacts import CACHE

from winohdl import cli as winohdl

from winohdl.core.suite import SUITE

SUITE_IDS = [e.name for e in SUITE]

# Two pytest workers on two cores: torch's own thread pool on top oversubscribes the machine
# (small SGD nets ran ~30x slower), so each worker trains on one thread.
torch.set_num_threads(1)

# Verilator's C++ objects (its run-time library above all) compiled once for the whole suite and
# its workers: sim/objcache.py, keyed by the preprocessed source, the flags and the compiler.
os.environ.setdefault("WINOHDL_CXX_CACHE", str(CACHE / "cxx"))


@pytest.fixture(params=SUITE, ids=SUITE_IDS)
def suite_entry(request):
    return request.param


@pytest.fixture
def cli(capsys):
    """Run ``winohdl`` in-process: returns (exit code, stdout, stderr); argparse exits count too."""
    def run(*argv):
        try:
            code = winohdl.main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err
    return run


def pytest_configure(config):
    config.addinivalue_line("markers", "slow(seconds): a test that takes about that long (on two loaded "
                                       "cores); run first, deselect with -m 'not slow' for a quick run")
    # with xdist (-n 2): hand out tests one at a time, so the slow ones, sorted first below, are
    # shared out between the workers as they come free instead of in chunks of hundreds
    if getattr(config.option, "maxschedchunk", "absent") is None:
        config.option.maxschedchunk = 1


def pytest_collection_modifyitems(items):
    """The slow tests first, slowest first (the rest keeps its order): the two workers start on the
    long ones and end on short ones together. Tests that share a cached artefact mark only the
    first that makes it, so two workers do not wait on one lock at the start."""
    def seconds(item):
        mark = item.get_closest_marker("slow")
        return -(mark.args[0] if mark and mark.args else 0)
    items.sort(key=seconds)
