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
