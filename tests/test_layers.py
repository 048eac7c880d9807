"""The layer contract (.importlinter): app above sim above miner | hdl above core, checked with import-linter."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contract_is_kept():
    lint = Path(sys.executable).parent / "lint-imports"
    p = subprocess.run([str(lint), "--config", str(ROOT / ".importlinter")], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "Contracts: 2 kept, 0 broken." in p.stdout


def test_a_wrong_import_breaks_the_contract(tmp_path):
    """The contract can fail: a copy of the tree where the miner imports hdl is refused."""
    import shutil
    for pkg in ("winohdl", "miner", "hdl", "sim"):
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    bad = tmp_path / "miner" / "search.py"
    bad.write_text("import hdl.cost\n" + bad.read_text())
    lint = Path(sys.executable).parent / "lint-imports"
    p = subprocess.run([str(lint), "--config", str(tmp_path / ".importlinter")], cwd=tmp_path, capture_output=True,
                       text=True, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert p.returncode != 0 and "miner.search -> hdl.cost" in p.stdout
