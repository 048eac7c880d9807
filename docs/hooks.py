"""MkDocs hook: the pages and pictures generated at every build (never stored in git).

- ``commands.md``: the command reference, from the argument parser (:mod:`docs.gen.commands`);
- ``img/tile_waves.svg`` and ``img/engine_waves.svg``: timing diagrams recorded from Amaranth's
  simulator running the generated tile and layer engine (:mod:`docs.gen.traces`);
- tables where a page has their marker: ``<!-- suite table -->`` the geometry suite (from
  :data:`winohdl.core.suite.SUITE`, the suite the tests run), ``<!-- limits table -->`` the size
  limits (:mod:`docs.gen.limits`, from the ``Limit`` objects).
"""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:   # this checkout's packages, whatever is installed
    sys.path.insert(0, str(ROOT))

from docs.gen import commands, limits, traces  # noqa: E402
from winohdl.core.suite import SUITE  # noqa: E402


def generated_files() -> dict[str, str]:
    """``{path inside the site: content}`` of everything generated."""
    return {"commands.md": commands.page(), "img/tile_waves.svg": traces.tile_svg(),
            "img/engine_waves.svg": traces.engine_svg()}


def on_files(files, config):
    for uri, content in generated_files().items():
        files.append(File.generated(config, uri, content=content))
    return files


def suite_table() -> str:
    """The geometry suite as a Markdown table."""
    x = lambda v: "x".join(map(str, v))  # noqa: E731
    rows = ["| name | axes | output | kernel | stride | dilation | R_min | direct | exercises |",
            "|---|---|---|---|---|---|---|---|---|"]
    rows += [f"| `{e.name}` | {e.geometry.axes} | {x(e.geometry.output)} | {x(e.geometry.kernel)} | "
             f"{x(e.geometry.stride)} | {x(e.geometry.dilation)} | {e.r_min} | {e.direct} | {e.exercises} |"
             for e in SUITE]
    return "\n".join(rows)


MARKS = {"<!-- suite table -->": suite_table, "<!-- limits table -->": limits.table}


def on_page_markdown(markdown, page, config, files):
    for mark, make in MARKS.items():
        if mark in markdown:
            markdown = markdown.replace(mark, make())
    return markdown
