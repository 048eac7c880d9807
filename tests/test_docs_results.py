"""The benchmark page's tables: each result record under docs/results/ parses, every row says when, on
which commit and on which machine it was measured, the rendered tables stay short, and the page's
``<!-- results: NAME -->`` markers and the records name each other one to one.
"""

import json
import re
import sys

import pytest

from artefacts import ROOT

if str(ROOT) not in sys.path:   # docs/ is no installed package: import it from this checkout
    sys.path.insert(0, str(ROOT))

from docs.gen import results  # noqa: E402

PAGE = ROOT / "docs" / "benchmarks.md"
PAGES = (PAGE, ROOT / "docs" / "mining.md")
RECORDS = results.names()
DATE = re.compile(r"^20\d\d-\d\d-\d\d( \d\d:\d\d( UTC)?)?$")


def test_records_exist():
    assert RECORDS, results.RESULTS


@pytest.mark.parametrize("name", RECORDS)
def test_record_rows_are_stamped(name):
    data = json.loads((results.RESULTS / f"{name}.json").read_text())
    rows = data[results.TABLES[name].rows]
    assert rows, name
    for row in rows:
        assert DATE.match(row["date"]), row
        assert re.fullmatch(r"[0-9a-f]{7,40}", row["commit"]), row
        assert row["machine"].strip(), row


@pytest.mark.parametrize("name", RECORDS)
def test_table_cells_are_short(name):
    head, *body = results.cells(name)
    assert body and all(len(line) == len(head) for line in body)
    long = [c for line in [head, *body] for c in line if len(c) > results.MAX_CELL]
    assert long == [], long


def test_pages_and_records_agree():
    """Every marker names a record with a table, every record is on one page once (the benchmarks page,
    or the page its subject has), and no table is written by hand into a page where a record holds it."""
    marks, rendered = [], ""
    for page in PAGES:
        text = page.read_text()
        marks += results.marks(text)
        rendered += results.render(text)
    assert sorted(marks) == RECORDS == sorted(results.TABLES), (marks, RECORDS)
    assert "<!-- results:" not in rendered
    for name in RECORDS:
        assert results.table(name) in rendered


def test_page_cells_and_prose_hold_no_dates():
    """Dates live in the rows' date column; the page's own tables stay short too."""
    page = PAGE.read_text()
    assert re.findall(r"20\d\d-\d\d-\d\d", page) == []
    cells = [c.strip() for line in page.splitlines() if line.startswith("|") for c in line.strip("|").split(" | ")]
    assert [c for c in cells if len(c) > results.MAX_CELL] == []


def test_a_row_renders_as_recorded():
    """Numbers keep their recorded digits: thousands separators, the script's precision, no rounding."""
    assert results.fmt(375390.6, ",.1f") == "375,390.6"
    assert results.fmt(16384) == "16,384"
    assert results.fmt(None) == "-" and results.fmt(results.ABSENT) == ""
    engine = results.table("engine")
    assert "| 178.3 (178.5 / 176.4 / 178.3) |" in engine and "| 1.426 |" in engine
