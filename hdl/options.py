"""Validated hardware options shared by the generator, the model and the testbench."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from miner.errors import WinohdlError

MIN_WIDTH, MAX_WIDTH = 2, 32
PIPELINES = ("none", "stages")
KERNEL_TRANSFORMS = ("hw", "offline")
ROUNDINGS = ("truncate", "round-half-up", "round-half-even")


def parse_choices(text: str, choices: tuple[str, ...], noun: str, every: str) -> list[str]:
    """``"a,b"`` -> ["a", "b"], each one of ``choices``; the word ``every`` means all of them."""
    names = list(choices) if text == every else [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        if n not in choices:
            raise WinohdlError(f"unknown {noun} {n!r}: choose {', '.join(choices)} or {every}")
    return names


@dataclass(frozen=True)
class HardwareOptions:
    """How a card becomes hardware.

    Parameters
    ----------
    data_width, kernel_width : int
        Signed two's complement widths of the d and g words (2..32).
    pipeline : {"none", "stages"}
        ``none``: combinational. ``stages``: registers after the transforms, after
        the multipliers and after the output transform (latency 3), with a valid bit.
    kernel_transform : {"hw", "offline"}
        ``hw``: the tile takes g. ``offline``: the tile takes the R transformed
        kernel words u, computed exactly on the host.
    output_width : int or None
        None: y is exact (width from the analysis). Otherwise y is shifted right by
        ``output_shift`` bits with ``rounding`` and saturated to this width.
    """

    data_width: int = 8
    kernel_width: int = 8
    pipeline: str = "none"
    kernel_transform: str = "hw"
    output_width: int | None = None
    rounding: str = "truncate"
    output_shift: int = 0

    @classmethod
    def make(cls, data_width=8, kernel_width=8, pipeline="none", kernel_transform="hw",
             output_width=None, rounding="truncate", output_shift=0) -> "HardwareOptions":
        for name, w in (("data width", data_width), ("kernel width", kernel_width)):
            if isinstance(w, bool) or not isinstance(w, int) or not MIN_WIDTH <= w <= MAX_WIDTH:
                raise WinohdlError(f"unsupported {name} {w!r}: choose {MIN_WIDTH}..{MAX_WIDTH} bits")
        if pipeline not in PIPELINES:
            raise WinohdlError(f"unknown pipeline {pipeline!r}: choose one of {', '.join(PIPELINES)}")
        if kernel_transform not in KERNEL_TRANSFORMS:
            raise WinohdlError(f"unknown kernel transform {kernel_transform!r}: choose one of "
                               f"{', '.join(KERNEL_TRANSFORMS)}")
        if rounding not in ROUNDINGS:
            raise WinohdlError(f"unknown rounding {rounding!r}: choose one of {', '.join(ROUNDINGS)}")
        if output_width is not None and not MIN_WIDTH <= output_width <= 64:
            raise WinohdlError(f"unsupported output width {output_width}: choose {MIN_WIDTH}..64 bits")
        if output_shift < 0 or (output_shift and output_width is None):
            raise WinohdlError("--output-shift needs --output-width and must be >= 0")
        return cls(data_width, kernel_width, pipeline, kernel_transform, output_width, rounding, output_shift)

    @property
    def latency(self) -> int:
        return 3 if self.pipeline == "stages" else 0

    @property
    def tag(self) -> str:
        """Short suffix naming the options, e.g. ``w8x8``, ``w8x8_stages_offline``."""
        parts = [f"w{self.data_width}x{self.kernel_width}"]
        if self.pipeline != "none":
            parts.append(self.pipeline)
        if self.kernel_transform != "hw":
            parts.append(self.kernel_transform)
        if self.output_width is not None:
            parts.append(f"y{self.output_width}s{self.output_shift}{self.rounding.replace('round-half-', 'r')}")
        return "_".join(parts)

    def to_dict(self) -> dict:
        return asdict(self)
