"""The documentation: the site builds strictly, the tutorial's commands run as written, the command
reference is the parser's help, the README stays short and true, nothing points outside the repository.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from artefacts import ROOT

if str(ROOT) not in sys.path:   # docs/ is no installed package: import it from this checkout
    sys.path.insert(0, str(ROOT))

from docs.gen import commands, console, pictures  # noqa: E402
from winohdl.cli import build_parser  # noqa: E402

RUN_PAGES = ("tutorial.md", "interfaces.md")   # pages whose console blocks the suite runs


def test_site_builds_strictly(tmp_path):
    """``mkdocs build --strict`` (as ``make docs``): a broken link, anchor or nav entry is an error."""
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "WARNING" not in r.stderr, r.stderr
    site = tmp_path / "site"
    for svg in ("tile_waves.svg", "engine_waves.svg", "multiplications.svg"):
        assert (site / "img" / svg).read_text().startswith(("<svg", "<?xml")), svg
    assert (site / "img" / "front_f4_3.png").read_bytes().startswith(b"\x89PNG")
    assert "   12         136      2  tiled 1" in (site / "mining.html").read_text()   # the front, computed
    reference = (site / "commands.html").read_text()
    for prog in commands.helps():
        assert f"<code>{prog}</code>" in reference, prog


def test_command_reference_is_the_help_text():
    """Each section is ``winohdl ... --help`` word for word, and every command has one."""
    helps = commands.helps()
    names = list(commands.subcommands(build_parser()))
    assert [p for p in helps if p.count(" ") == 1] == [f"winohdl {n}" for n in names]
    env = dict(os.environ, COLUMNS=str(commands.WIDTH), PYTHONPATH=str(ROOT))
    for prog in ("winohdl", "winohdl gen", "winohdl bench mine"):
        r = subprocess.run([sys.executable, "-m", "winohdl", *prog.split()[1:], "--help"], env=env,
                           capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout == helps[prog]
    page = commands.page()
    assert all(f"## `{p}`" in page for p in helps)


def test_console_blocks_are_parsed(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("text\n\n```console\n$ echo a \\\n    b\nout\n$ true\n```\n\n<!-- slow -->\n```console\n"
                    "$ sleep 100\n```\n<!-- file: x.v -->\n```verilog\nmodule x;\nendmodule\n```\n"
                    "```sh\n$ not run\n```\n")
    assert console.steps(page) == [console.Step("echo a \\\n    b"), console.Step("true"),
                                   console.Step("sleep 100", slow=True),
                                   console.Step("module x;\nendmodule\n", file="x.v")]


@pytest.mark.slow(45)
def test_documented_commands_run_as_written(tmp_path):
    """The tutorial's and the interface page's commands, in order, in a fresh folder (examples/
    linked in): each exits 0 (the Verilog testbench prints PASS under -g2005 and -g2012)."""
    env = console.prepare(tmp_path, ROOT, sys.executable)
    steps = [s for page in RUN_PAGES for s in console.steps(ROOT / "docs" / page)]
    assert sum(not s.slow and s.file is None for s in steps) >= 14
    assert any(s.file == "engine_tb.v" for s in steps)
    done = console.run(steps, tmp_path, env)
    assert [c for c, _ in done] == [s.text for s in steps if not s.slow and s.file is None]
    assert (tmp_path / "build/digits/network/network.v").is_file()


def test_readme_is_short_and_names_every_command():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    for name in commands.subcommands(build_parser()):
        assert re.search(rf"^\| `winohdl {name}\b", text, re.M), name
    for target in re.findall(r"\]\(((?:docs|examples)/[^)#]+)", text):     # every link resolves
        assert (ROOT / target).exists(), target


def test_readme_picture_is_generated():
    """docs/img/multiplications.svg is what ``python -m docs.gen.pictures`` writes (exact figures)."""
    assert pictures.PICTURE.read_text() == pictures.svg()
    assert pictures.series()["Winograd, stride 1"][1] == 4.0     # F(2x2,3x3): 16 multiplications for 4 outputs


def test_no_reference_outside_the_repository():
    """No source or page names a file that is not in the repository (the project's design note kept
    beside the checkout, for one)."""
    outside = re.compile("shared" + "/|" + "DESIGN" + r"\.md")   # spelt in pieces: this file is searched too
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in ("build", ".venv", ".git", "__pycache__", "site")]
        for name in files:
            if name.endswith((".py", ".md", ".yml", ".toml")):
                path = Path(folder) / name
                found += [f"{path.relative_to(ROOT)}:{n}" for n, line in
                          enumerate(path.read_text(errors="replace").splitlines(), 1) if outside.search(line)]
    assert found == []
