"""MkDocs hook: the pages and pictures generated at every build (never stored in git).

- ``commands.md``: the command reference, from the argument parser (:mod:`docs.gen.commands`);
- ``img/tile_waves.svg`` and ``img/engine_waves.svg``: timing diagrams recorded from Amaranth's
  simulator running the generated tile and layer engine (:mod:`docs.gen.traces`);
- ``img/front_f4_3.png``, the R front of F(4,3) (:mod:`docs.gen.front`, as ``winohdl mine --pareto``
  computes it), and its table where a page says ``<!-- front table -->``;
- tables where a page has their marker: ``<!-- suite table -->`` the geometry suite (from
  :data:`winohdl.core.suite.SUITE`, the suite the tests run), ``<!-- limits table -->`` the size
  limits (:mod:`docs.gen.limits`, from the ``Limit`` objects), ``<!-- sgd settings -->`` the SGD
  settings and their defaults (:class:`miner.sgd.SGDConfig`), ``<!-- results: NAME -->`` the benchmark
  table of the result record ``docs/results/NAME.json`` (:mod:`docs.gen.results`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:   # this checkout's packages, whatever is installed
    sys.path.insert(0, str(ROOT))

from docs.gen import commands, front, limits, results, traces  # noqa: E402
from winohdl.core.suite import SUITE  # noqa: E402


_front = {}   # the R front, computed once a build (a picture and a table)


def generated_files() -> dict[str, str | bytes]:
    """``{path inside the site: content}`` of everything generated."""
    _front["front"] = front.front()
    return {"commands.md": commands.page(), "img/tile_waves.svg": traces.tile_svg(),
            "img/engine_waves.svg": traces.engine_svg(), "img/front_f4_3.png": _front["front"].png}


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


def sgd_settings_table() -> str:
    """Every ``--sgd`` setting with its default and what it does (from :class:`miner.sgd.SGDConfig`)."""
    from dataclasses import fields
    from miner.sgd_config import SETTINGS, SGDConfig
    defaults = {f.name: f.default for f in fields(SGDConfig)}
    rows = ["| setting | default | what it does |", "|---|---|---|"]
    rows += [f"| `{name}` | {defaults[name]:,} | {what} |" if not isinstance(defaults[name], bool) else
             f"| `{name}` | {str(defaults[name]).lower()} | {what} |" for name, what in SETTINGS.items()]
    return "\n".join(rows)


def front_table() -> str:
    return f"```text\n$ {front.COMMAND}\n{_front['front'].table}\n```"


MARKS = {"<!-- suite table -->": suite_table, "<!-- limits table -->": limits.table,
         "<!-- front table -->": front_table, "<!-- sgd settings -->": sgd_settings_table}


def on_page_markdown(markdown, page, config, files):
    for mark, make in MARKS.items():
        if mark in markdown:
            markdown = markdown.replace(mark, make())
    return results.render(markdown)
