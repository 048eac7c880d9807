"""winohdl miner: geometry, exact tensor, algorithm cards, constructive optimum and mining methods."""

from .card import AlgorithmCard, CardError
from .constructive import constructive_card
from .errors import WinohdlError
from .geometry import Geometry

__all__ = ["AlgorithmCard", "CardError", "Geometry", "WinohdlError", "constructive_card"]
