"""Property tests of the loaders: whatever a file holds, loading gives a clean result or exactly one
WinohdlError (one line, for the command line's ``error: ...``), never another exception.

Mutations of valid files: a key deleted, a value replaced by random JSON, a key added, the bytes
truncated or overwritten, random bytes. Geometry strings: random text and near-misses.
Hypothesis is derandomised, so every run tries the same examples.
"""

from __future__ import annotations

import copy
import json
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hdl.design import CARD_FILE, DESIGN_FILE, generate_design, open_design, write_design_folder
from hdl.options import HardwareOptions
from miner.constructive import constructive_card
from winohdl.core.card import AlgorithmCard
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry, parse_int_list
from winohdl.core.suite import BY_NAME

SETTINGS = dict(derandomize=True, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

# ---- strategies ----------------------------------------------------------------------------------------

scalars = (st.none() | st.booleans() | st.integers(-10**80, 10**80) | st.integers(-3, 70)
           | st.floats(allow_nan=True, allow_infinity=True)
           | st.sampled_from(["", "1/0", "-1/2", "0", "1", " 3 / 4 ", "1e3", "x", "\u0663", "9" * 70, "none",
                              "stages", "offline", "winohdl-card/1", "winohdl-design/2", "card.json", "a\u0000b"])
           | st.text(max_size=12))
random_json = st.recursive(scalars, lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(st.text(max_size=8), children, max_size=4), max_leaves=12)


def paths(doc, prefix=()):
    """Every path (tuple of keys and indices) into a JSON document, the root included."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += paths(v, prefix + (i,))
    return out


def at(doc, path):
    for k in path:
        doc = doc[k]
    return doc


@st.composite
def mutated_json(draw, doc):
    """``doc`` with one to three random edits: delete, replace with random JSON, or add a key."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths(doc)))
        kind = draw(st.sampled_from(["delete", "replace", "replace", "add"]))
        if not path:
            if kind == "replace":
                doc = draw(random_json)
            continue
        parent, key = at(doc, path[:-1]), path[-1]
        if kind == "delete":
            del parent[key]
        elif kind == "replace":
            parent[key] = draw(random_json)
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=8))] = draw(random_json)
        else:
            parent.insert(key, draw(random_json))
    return doc


@st.composite
def mutated_bytes(draw, raw: bytes):
    """``raw`` truncated, with bytes overwritten or inserted, or replaced by random bytes."""
    kind = draw(st.sampled_from(["truncate", "overwrite", "insert", "random"]))
    if kind == "random":
        return draw(st.binary(max_size=300))
    i = draw(st.integers(0, len(raw)))
    if kind == "truncate":
        return raw[:i]
    junk = draw(st.binary(min_size=1, max_size=8) | st.sampled_from([b"\xff", b"[" * 40, b"\x00", b'"', b"}"]))
    return raw[:i] + junk + raw[i + (len(junk) if kind == "overwrite" else 0):]


def clean_or_one_error(fn):
    """Call ``fn``: a result, or one WinohdlError with a non-empty message; anything else fails."""
    try:
        return fn()
    except WinohdlError as exc:
        assert str(exc).strip()
        return None


# ---- fixtures ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def valid(tmp_path_factory):
    base = tmp_path_factory.mktemp("valid")
    card = constructive_card(BY_NAME["f2_3"].geometry)
    folder = write_design_folder(base / "design", generate_design(card, HardwareOptions()))
    return {"folder": folder, "card": json.loads((folder / CARD_FILE).read_text()),
            "design": json.loads((folder / DESIGN_FILE).read_text()),
            "work": base / "work"}


def fresh(valid):
    """A fresh copy of the design folder for one example."""
    shutil.rmtree(valid["work"], ignore_errors=True)
    return shutil.copytree(valid["folder"], valid["work"])


# ---- the card loader ----------------------------------------------------------------------------------------

@settings(max_examples=300, **SETTINGS)
@given(data=st.data())
def test_card_from_mutated_json(valid, data):
    doc = data.draw(mutated_json(valid["card"]))
    card = clean_or_one_error(lambda: AlgorithmCard.from_json(doc))
    if card is not None:  # loaded: then it is the proven card (costs and proof fields are never trusted)
        assert card.content_hash() == AlgorithmCard.from_json(valid["card"]).content_hash()


@settings(max_examples=200, **SETTINGS)
@given(data=st.data())
def test_card_file_from_mutated_bytes(valid, data):
    work = fresh(valid)
    raw = (valid["folder"] / CARD_FILE).read_bytes()
    path = work / "mutated.json"
    path.write_bytes(data.draw(mutated_bytes(raw)))
    clean_or_one_error(lambda: AlgorithmCard.load(path))


def test_card_costs_are_not_read(valid):
    doc = copy.deepcopy(valid["card"])
    doc["costs"] = {"adders": 5}
    doc["proof"] = {"exact": False, "entries_checked": -1}
    card = AlgorithmCard.from_json(doc)
    assert card.entries_checked == 24 and "adders" not in card.to_json()["costs"]


# ---- the design loader ----------------------------------------------------------------------------------------

@settings(max_examples=150, **SETTINGS)
@given(data=st.data())
def test_design_from_mutated_json(valid, data):
    work = fresh(valid)
    doc = data.draw(mutated_json(valid["design"]))
    (work / DESIGN_FILE).write_text(json.dumps(doc))
    allow_edits = data.draw(st.booleans())
    clean_or_one_error(lambda: open_design(work, allow_edits=allow_edits))


@settings(max_examples=150, **SETTINGS)
@given(data=st.data())
def test_design_from_mutated_files(valid, data):
    work = fresh(valid)
    name = data.draw(st.sampled_from(sorted(p.name for p in valid["folder"].iterdir())))
    raw = (valid["folder"] / name).read_bytes()
    if data.draw(st.integers(0, 9)) == 0:
        (work / name).unlink()
    else:
        (work / name).write_bytes(data.draw(mutated_bytes(raw)))
    allow_edits = data.draw(st.booleans())
    clean_or_one_error(lambda: open_design(work, allow_edits=allow_edits))


# ---- parsing geometry and lists ------------------------------------------------------------------------------

near_miss = st.lists(st.sampled_from(["1", "2", "3", "0", "-1", "64", "65", "x", "X", " ", "+", "_", "9" * 25,
                                      "\u0663", ",", ""]), max_size=8).map("".join)
well_formed = st.lists(st.integers(-2, 70), min_size=1, max_size=4).map(lambda v: "x".join(map(str, v)))
geometry_text = well_formed | near_miss | st.text(max_size=20)


@settings(max_examples=400, **SETTINGS)
@given(output=geometry_text, kernel=geometry_text, stride=geometry_text, dilation=geometry_text)
def test_geometry_parse(output, kernel, stride, dilation):
    g = clean_or_one_error(lambda: Geometry.parse(output, kernel, stride, dilation))
    if g is not None:
        assert 1 <= g.axes <= 3 and g.lower_bound() <= g.direct_count


@settings(max_examples=200, **SETTINGS)
@given(text=geometry_text)
def test_int_list_parse(text):
    values = clean_or_one_error(lambda: parse_int_list(text, "--tiles"))
    if values is not None:
        assert values and all(1 <= v <= 64 for v in values) and len(set(values)) == len(values)
