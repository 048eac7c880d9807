"""The layer contract (.importlinter): app above sim | synth above miner | hdl above core, checked with
import-linter."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("winohdl", "miner", "hdl", "sim", "synth")


def test_import_contract_is_kept():
    lint = Path(sys.executable).parent / "lint-imports"
    p = subprocess.run([str(lint), "--config", str(ROOT / ".importlinter")], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "Contracts: 2 kept, 0 broken." in p.stdout


def test_the_contract_names_every_package():
    """Every top-level package of the wheel is a root package of the contract, and the other way round."""
    import tomllib
    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    text = (ROOT / ".importlinter").read_text()
    roots = text.split("root_packages =")[1].split("include_external_packages")[0].split()
    assert sorted(wheel["packages"]) == sorted(roots) == sorted(PACKAGES)


@pytest.mark.parametrize("module, line, edge", [
    ("miner/search.py", "import hdl.cost\n", "miner.search -> hdl.cost"),             # siblings
    ("sim/run.py", "import synth.yosys\n", "sim.run -> synth.yosys"),                 # siblings
    ("synth/pnr.py", "import sim.tools\n", "synth.pnr -> sim.tools"),                 # siblings
    ("hdl/cost.py", "import synth.yosys\n", "hdl.cost -> synth.yosys"),               # upward
    ("winohdl/core/io.py", "import synth.yosys\n", "winohdl.core.io -> synth.yosys"),  # core is the bottom
])
def test_a_wrong_import_breaks_the_contract(tmp_path, module, line, edge):
    """The contract can fail: a copy of the tree with one forbidden import is refused."""
    import shutil
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    bad = tmp_path / module
    bad.write_text(line + bad.read_text())
    lint = Path(sys.executable).parent / "lint-imports"
    p = subprocess.run([str(lint), "--config", str(tmp_path / ".importlinter")], cwd=tmp_path, capture_output=True,
                       text=True, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert p.returncode != 0 and edge in p.stdout
