"""Every command of the documentation, the slow ones too: ``.venv/bin/python bench/docs_commands.py [-o DIR]``.

The test suite runs the tutorial's and the interface page's commands except those marked ``<!-- slow -->``
(tests/test_docs.py); this runs them all, in order, in a fresh folder (default build/docs-commands/), and
prints the seconds each took. Exit 1 at the first command that fails, with its output's end.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from docs.gen import console  # noqa: E402

PAGES = ("tutorial.md", "interfaces.md")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", default=str(ROOT / "build" / "docs-commands"), help="work folder (emptied first)")
    a = p.parse_args(argv)
    work = Path(a.o)
    shutil.rmtree(work, ignore_errors=True)
    env = console.prepare(work, ROOT, sys.executable)
    steps = [s for page in PAGES for s in console.steps(ROOT / "docs" / page)]
    try:
        done = console.run(steps, work, env, slow=True, timeout=3600)
    except console.StepFailed as exc:
        print(f"FAIL {exc}", file=sys.stderr)
        return 1
    slow = {s.text for s in steps if s.slow}
    for command, seconds in done:
        first = command.splitlines()[0]
        print(f"{seconds:7.1f} s  {'slow ' if command in slow else '     '} {first[:100]}")
    print(f"{sum(s for _, s in done):7.1f} s  in all ({sum(s for c, s in done if c not in slow):.1f} s in the suite)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
