"""The machinery that makes the suite fast without making it lie: the compiler cache in front of
Verilator's C++ (sim/objcache.py) and the cache of test artefacts (tests/artefacts.py)."""

import multiprocessing
import shutil
import time

import pytest

import artefacts
from sim import objcache

pytestmark = pytest.mark.skipif(not shutil.which("c++"), reason="needs a C++ compiler (Verilator does too)")


def _compile(folder, cache, monkeypatch, *flags):
    monkeypatch.chdir(folder)
    monkeypatch.setenv("WINOHDL_CXX_CACHE", str(cache))
    return objcache.main(["objcache.py", "c++", *flags, "-MMD", "-c", "-o", "a.o", "a.cpp"])


def _sources(folder, value):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a.h").write_text(f"#define VALUE {value}\n")
    (folder / "a.cpp").write_text('#include "a.h"\nint value() { return VALUE; }\n')


def _entries(cache):
    return sorted(p.name for p in cache.glob("*/*") if p.is_dir())


def test_an_object_is_compiled_once_and_a_changed_header_is_a_miss(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    _sources(tmp_path / "one", 1)
    _sources(tmp_path / "two", 1)   # the same sources elsewhere: the same object
    assert _compile(tmp_path / "one", cache, monkeypatch, "-O0") == 0
    assert _compile(tmp_path / "two", cache, monkeypatch, "-O0") == 0
    assert len(_entries(cache)) == 1
    assert (tmp_path / "two" / "a.o").read_bytes() == (tmp_path / "one" / "a.o").read_bytes()
    assert (tmp_path / "two" / "a.d").read_text() == (tmp_path / "one" / "a.d").read_text()
    _sources(tmp_path / "three", 2)  # a header changed: compiled again
    assert _compile(tmp_path / "three", cache, monkeypatch, "-O0") == 0
    assert _compile(tmp_path / "one", cache, monkeypatch, "-O1") == 0  # other flags: again
    assert len(_entries(cache)) == 3
    assert (tmp_path / "three" / "a.o").read_bytes() != (tmp_path / "one" / "a.o").read_bytes()


def test_what_is_not_cached(tmp_path, monkeypatch):
    """A broken source fails as it would without the cache; a precompiled-header compile and a
    link go straight to the compiler."""
    cache = tmp_path / "cache"
    _sources(tmp_path, 1)
    (tmp_path / "a.cpp").write_text("int value() { return }\n")
    assert _compile(tmp_path, cache, monkeypatch) != 0 and not _entries(cache)
    assert objcache.parse(["-include", "V__pch.h.fast", "-c", "x.cpp"]) is None
    assert objcache.parse(["x.o", "y.o", "-o", "top"]) is None
    source, out, flags = objcache.parse(["-Os", "-I.", "-MMD", "-c", "-o", "v.o", "/inc/v.cpp"])
    assert (str(source), str(out), flags) == ("/inc/v.cpp", "v.o", ["-Os", "-I.", "-c"])


def _make_slowly(tmp, log):
    with open(log, "a") as f:
        f.write("made\n")
    time.sleep(0.5)
    (tmp / "thing").write_text("done")


def _ask(log, root):
    artefacts.CACHE = root
    folder = artefacts.cached("race", {"n": 1}, lambda tmp: _make_slowly(tmp, log))
    assert (folder / "thing").read_text() == "done"


def test_two_workers_asking_at_once_make_an_artefact_once(tmp_path, monkeypatch):
    monkeypatch.setattr(artefacts, "CACHE", tmp_path / "cache")
    log = tmp_path / "log"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_ask, args=(log, tmp_path / "cache")) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    assert [p.exitcode for p in procs] == [0, 0]
    assert log.read_text() == "made\n"
    again = artefacts.cached("race", {"n": 1}, lambda tmp: pytest.fail("made twice"))
    assert (again / "thing").read_text() == "done"
    other = artefacts.cached("race", {"n": 2}, lambda tmp: (tmp / "thing").write_text("other"))
    assert other != again and (other / "thing").read_text() == "other"


def test_a_half_made_artefact_is_made_again(tmp_path, monkeypatch):
    monkeypatch.setattr(artefacts, "CACHE", tmp_path / "cache")

    def interrupted(tmp):
        (tmp / "thing").write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        artefacts.cached("half", {}, interrupted)
    folder = artefacts.cached("half", {}, lambda tmp: (tmp / "thing").write_text("whole"))
    assert (folder / "thing").read_text() == "whole"


def test_the_key_holds_the_settings_and_the_sources(tmp_path, monkeypatch):
    monkeypatch.setattr(artefacts, "CACHE", tmp_path / "cache")
    plain = artefacts.cached("k", {}, lambda tmp: None)
    monkeypatch.setenv("WINOHDL_MAX_ENGINE_MEMORY_DEPTH", "4096")  # a limit can change what is made
    limited = artefacts.cached("k", {}, lambda tmp: None)
    monkeypatch.setattr(artefacts, "source_version", lambda: "another version of the sources")
    edited = artefacts.cached("k", {}, lambda tmp: None)
    assert len({plain, limited, edited}) == 3
