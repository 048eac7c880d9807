"""Which A^T and B^T the Winograd engine builds: serial (row-column, :mod:`hdl.engine.serial`) where
the card and the layer allow it, else parallel (:class:`~hdl.engine.options.OutputTransform`,
:class:`~hdl.engine.options.InputTransform`). A serial transform asked for where it cannot work is a
one-line error.
"""

from __future__ import annotations

from functools import lru_cache

from winohdl.core.errors import WinohdlError

from ..datapath import Datapath
from ..rowcol import signed_kronecker_factors, transpose
from .latency import READ_TO_TILE, TILE_WRITE_REGISTERS
from .options import MEMORY_DEPTH, EngineOptions, InputTransform, OutputTransform
from .serial import Pass, plan_passes, serial_fits, serial_latency


def serial_output_passes(o: EngineOptions, dp: Datapath) -> tuple[list[int], list[Pass]] | None:
    """(accumulator signs, passes) of the serial output transform, or None for the parallel one."""
    if o.output_transform is OutputTransform.PARALLEL:
        return None
    found, passes = _output_factors(dp, o.geometry.output)
    # cycles between two groups' totals: C / PC, or with a kernel mask the smallest group's blocks
    if passes is not None and serial_fits(passes, o.group_cycles):
        return found[0], passes
    if o.output_transform is OutputTransform.SERIAL:
        why = ("the card's A^T is not a Kronecker product of per-axis matrices" if passes is None else
               f"its passes read {'+'.join(str(p.fibres) for p in passes)} fibres, more than "
               + (f"--in-channels / --parallel-in = {o.channel_groups} cycles between output tiles allow"
                  if not o.skips else
                  f"the {o.group_cycles} visited blocks of the kernel mask's smallest output group allow"))
        raise WinohdlError(f"--output-transform serial: {why}; use parallel or auto")
    return None


def serial_input_passes(o: EngineOptions, dp: Datapath) -> list[Pass] | None:
    """The serial input transform's passes (B^T once per tile and input-channel group, one pass
    ahead of the multipliers), or None for the parallel one (also where its feature-map banks,
    :attr:`EngineOptions.fibre_bank_depth`, would pass the memory-depth limit)."""
    if o.input_transform is InputTransform.PARALLEL:
        return None
    if o.skips:
        # its passes read a tile every K / PK issues and the multipliers lag one pass of K/PK x C/PC
        # issues: a walk that skips blocks has neither
        if o.input_transform is InputTransform.SERIAL:
            raise WinohdlError("--input-transform serial does not combine with a kernel mask (skipped blocks): "
                               "use parallel or auto")
        return None
    g = o.geometry
    passes = _input_factors(dp, g.input)
    need = None
    if passes is not None:
        # the last group's transformed tile is written before the next pass reads it
        need = READ_TO_TILE.cycles + serial_latency(passes, o.per_stage) + TILE_WRITE_REGISTERS + 1
        fits = serial_fits(passes, o.kernel_groups) and o.kernel_groups + o.channel_groups >= need
        if fits and o.fibre_bank_depth <= MEMORY_DEPTH.value:
            return passes
        if fits and o.input_transform is InputTransform.SERIAL:
            # its feature-map banks hold whole positions along every axis but the last
            MEMORY_DEPTH.check(o.fibre_bank_depth, "the depth of a feature-map bank of the serial input transform")
    if o.input_transform is InputTransform.SERIAL:
        why = ("a 1D card has no rows to share" if g.axes == 1 else
               "the card's B^T is not a sign-free Kronecker product of per-axis matrices" if passes is None else
               f"its passes read {'+'.join(str(p.fibres) for p in passes)} fibres per input tile and its "
               f"result takes {need} cycles, more than --out-channels / --parallel-out = {o.kernel_groups} "
               f"cycles per input tile (and that plus --in-channels / --parallel-in = {o.channel_groups}) allow")
        raise WinohdlError(f"--input-transform serial: {why}; use parallel or auto")
    return None


@lru_cache(maxsize=256)
def _output_factors(dp: Datapath, output: tuple[int, ...]):
    """A^T's signed Kronecker factors over the output tile's axes and their passes (None where it has none):
    the card's alone, so once per card however many engines are planned on it. Treat them as immutable."""
    found = signed_kronecker_factors(dp.scaled.AT, output)
    return found, (plan_passes(found[1]) if found is not None and len(found[1]) > 1 else None)


@lru_cache(maxsize=256)
def _input_factors(dp: Datapath, input_tile: tuple[int, ...]) -> list[Pass] | None:
    """B^T's passes over the input tile's axes (B^T = diag(s) (F_1^T (x) ... (x) F_N^T), its transpose
    factored; a sign would negate a Winograd-domain word, so only sign-free factorisations), or None."""
    found = signed_kronecker_factors(transpose(dp.scaled.BT), input_tile)
    kron = found is not None and len(input_tile) > 1 and all(sg > 0 for sg in found[0])
    return plan_passes([transpose(f) for f in found[1]]) if kron else None
