import pytest

import winohdl

from miner.suite import SUITE

SUITE_IDS = [e.name for e in SUITE]


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
