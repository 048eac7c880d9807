"""The runnable steps of a documentation page: its ``console`` blocks and the files it asks to save.

A page's fenced ```` ```console ```` block holds commands after ``$ `` (a line ending in ``\\`` goes
on) and, between them, output shown to the reader (not run). An HTML comment right before a block
marks it: ``<!-- slow -->`` (too slow for the test suite: ``bench/docs_commands.py`` runs it) or,
before any other fenced block, ``<!-- file: NAME -->`` (the block is saved as NAME before the next
commands run). Everything else on the page is prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^```(\w*)\s*$")
_MARK = re.compile(r"^<!--\s*(slow|file:\s*(\S+))\s*-->\s*$")


@dataclass(frozen=True)
class Step:
    """One command (``file`` None) or one file to write (``file`` its name, ``text`` its content)."""

    text: str
    file: str | None = None
    slow: bool = False


def steps(page: Path) -> list[Step]:
    """The page's steps in order."""
    out, mark, lines = [], None, page.read_text().splitlines()
    i = 0
    while i < len(lines):
        found, fence = _MARK.match(lines[i]), _FENCE.match(lines[i])
        if found:
            mark = found
        elif fence and fence.group(1):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            body = lines[i + 1:end]
            if mark is not None and mark.group(2):
                out.append(Step("\n".join(body) + "\n", file=mark.group(2)))
            elif fence.group(1) == "console":
                out += [Step(c, slow=mark is not None) for c in _commands(body)]
            mark, i = None, end
        elif lines[i].strip():
            mark = None
        i += 1
    return out


def _commands(body: list[str]) -> list[str]:
    commands, current = [], None
    for line in body:
        if current is not None:
            current.append(line)
        elif line.startswith("$ "):
            current = [line[2:]]
        if current is not None and not line.endswith("\\"):
            commands.append("\n".join(current))
            current = None
    return commands


class StepFailed(Exception):
    """A documented command that did not exit 0 (the message has the command and its output's end)."""


def prepare(workdir: Path, root: Path, python: str) -> dict[str, str]:
    """Make ``workdir`` look like a checkout to the commands (``examples/`` linked in, ``winohdl`` and
    ``python`` on PATH running this checkout with ``python``); returns their environment."""
    import os
    import stat
    workdir.mkdir(parents=True, exist_ok=True)
    if not (workdir / "examples").exists():
        (workdir / "examples").symlink_to(root / "examples")
    bin_dir = workdir / ".docs-bin"
    bin_dir.mkdir(exist_ok=True)
    for name, line in (("winohdl", f'exec "{python}" -m winohdl "$@"'), ("python", f'exec "{python}" "$@"')):
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\n{line}\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = f"{root}{os.pathsep}{env['PYTHONPATH']}" if env.get("PYTHONPATH") else str(root)
    return env


def run(page_steps: list[Step], workdir: Path, env: dict[str, str], slow: bool = False,
        timeout: float = 900) -> list[tuple[str, float]]:
    """Run the steps in ``workdir`` (the slow ones only with ``slow``); (command, seconds) of each."""
    import subprocess
    import time
    done = []
    for step in page_steps:
        if step.file is not None:
            (workdir / step.file).write_text(step.text)
            continue
        if step.slow and not slow:
            continue
        t0 = time.monotonic()
        r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", step.text], cwd=workdir, env=env,
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise StepFailed(f"{step.text!r} exited {r.returncode}:\n{(r.stdout + r.stderr)[-3000:]}")
        done.append((step.text, time.monotonic() - t0))
    return done
