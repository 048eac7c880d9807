"""A small timing-diagram renderer: signals sampled once per clock cycle, drawn as an SVG.

The input is what a simulation recorded (one value per cycle and signal), so a diagram cannot
disagree with the hardware it shows. One-bit signals are drawn high or low; buses as a band that
crosses over where the value changes, labelled with the value (or a caller's label, e.g. the beat's
meaning) and left empty where the label is ``None`` (nothing valid on the bus).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

CYCLE = 22      # pixels a cycle (default)
CHAR = 5.5      # pixels a character of a bus label (9 px monospace)
ROW = 26        # pixels a signal
NAME = 150      # pixels of the name column
HIGH, LOW = 5, 19   # y of a one-bit signal's high and low level inside its row


@dataclass(frozen=True)
class Wave:
    """One row of a diagram: ``values`` (one per cycle); ``bus`` rows show ``labels`` instead."""

    name: str
    values: tuple
    bus: bool = False

    def segments(self):
        """(first cycle, cycles, value) of each run of equal values."""
        runs, start = [], 0
        for i in range(1, len(self.values) + 1):
            if i == len(self.values) or self.values[i] != self.values[start]:
                runs.append((start, i - start, self.values[start]))
                start = i
        return runs


def _clock(cycles: int, y0: int, cycle: int) -> list[str]:
    """A clock row: high in the first half of every cycle (rising edges on the grid lines)."""
    points = []
    for i in range(cycles):
        x = NAME + i * cycle
        points += [f"{x},{y0 + LOW}", f"{x},{y0 + HIGH}", f"{x + cycle // 2},{y0 + HIGH}",
                   f"{x + cycle // 2},{y0 + LOW}", f"{x + cycle},{y0 + LOW}"]
    return [f'<polyline points="{" ".join(points)}" class="bit"/>']


def _bit(w: Wave, y0: int, cycle: int) -> list[str]:
    points = []
    for i, v in enumerate(w.values):
        level = y0 + (HIGH if v else LOW)
        x = NAME + i * cycle
        points += [f"{x},{level}", f"{x + cycle},{level}"]
    return [f'<polyline points="{" ".join(points)}" class="bit"/>']


def _bus(w: Wave, y0: int, cycle: int) -> list[str]:
    out = []
    top, bottom, mid = y0 + HIGH, y0 + LOW, y0 + (HIGH + LOW) // 2
    for start, n, label in w.segments():
        x0, x1 = NAME + start * cycle, NAME + (start + n) * cycle
        if label is None:
            out.append(f'<line x1="{x0}" y1="{mid}" x2="{x1}" y2="{mid}" class="idle"/>')
            continue
        s = 3   # the slant of a value change
        out.append(f'<polygon points="{x0},{mid} {x0 + s},{top} {x1 - s},{top} {x1},{mid} {x1 - s},{bottom} '
                   f'{x0 + s},{bottom}" class="bus"/>')
        if len(str(label)) * CHAR + 4 <= x1 - x0:    # only a label that fits
            out.append(f'<text x="{(x0 + x1) / 2}" y="{mid + 4}" class="value">{escape(str(label))}</text>')
    return out


def svg(waves: list[Wave], title: str = "", cycle: int = CYCLE) -> str:
    """The diagram of ``waves`` (all of one length) as an SVG document, ``cycle`` pixels a cycle, under
    a clock row (each value holds from one rising edge to the next, which captures it)."""
    cycles = max(len(w.values) for w in waves)
    width, height = NAME + cycles * cycle + 10, ROW * (len(waves) + 2) + 10
    body = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="10">',
            f'<title>{escape(title)}</title>',
            '<style>.bit{fill:none;stroke:#1f4e9a;stroke-width:1.5}.bus{fill:#e8eef9;stroke:#1f4e9a}'
            '.idle{stroke:#999}.value{text-anchor:middle;font-size:9px}.name{text-anchor:end}'
            '.grid{stroke:#ddd}.clock{text-anchor:middle;fill:#777;font-size:9px}</style>']
    for i in range(cycles + 1):     # a grid line at every rising edge, numbered every fifth
        x = NAME + i * cycle
        body.append(f'<line x1="{x}" y1="{ROW - 6}" x2="{x}" y2="{height - 6}" class="grid"/>')
        if i % 5 == 0 and i < cycles:
            body.append(f'<text x="{x}" y="{ROW - 10}" class="clock">{i}</text>')
    body.append(f'<text x="{NAME - 8}" y="{ROW + 16}" class="name">clk</text>')
    body += _clock(cycles, ROW, cycle)
    for row, w in enumerate(waves, start=2):
        y0 = row * ROW
        body.append(f'<text x="{NAME - 8}" y="{y0 + 16}" class="name">{escape(w.name)}</text>')
        body += _bus(w, y0, cycle) if w.bus else _bit(w, y0, cycle)
    body.append("</svg>")
    return "\n".join(body) + "\n"
