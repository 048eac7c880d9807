import pytest
import torch

from winohdl import cli as winohdl

from winohdl.core.suite import SUITE

SUITE_IDS = [e.name for e in SUITE]

# Two pytest workers on two cores: torch's own thread pool on top oversubscribes the machine
# (small SGD nets ran ~30x slower), so each worker trains on one thread.
torch.set_num_threads(1)


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
