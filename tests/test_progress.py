"""winohdl.core.progress: the display the command line turns on, and the one callback a program hears."""

from winohdl.core import progress
from winohdl.network import api

TINY = """import torch
from torch import nn


def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3)).eval()
"""


def test_a_listener_hears_every_step_with_the_display_off(tmp_path):
    heard = []
    progress.listen(lambda what, done, total: heard.append((what, done, total)))
    try:
        with progress.bar(2, "two steps") as bar:
            bar.update()
            bar.update()
        progress.status("a line")
        (tmp_path / "m.py").write_text(TINY)
        api.plan(api.import_model(f"{tmp_path}/m.py:net", (1, 1, 6, 6)))
    finally:
        progress.listen(None)
    assert heard[:3] == [("two steps", 1, 2), ("two steps", 2, 2), ("a line", 0, None)]
    planning = [h for h in heard[3:] if h[0].startswith("planning")]
    assert planning and planning[-1][1] >= 2          # the planner's steps, counted
    with progress.bar(1, "unheard") as bar:
        bar.update()
    assert not any(h[0] == "unheard" for h in heard)
