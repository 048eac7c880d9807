import pytest

from miner.suite import SUITE

SUITE_IDS = [e.name for e in SUITE]


@pytest.fixture(params=SUITE, ids=SUITE_IDS)
def suite_entry(request):
    return request.param
