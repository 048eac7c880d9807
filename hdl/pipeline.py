"""Register chains and wrapping counters, the two pieces of sequential logic the generators repeat.

Every chain of registers (a delay line, a flag travelling beside the data, a copy per staggered
fibre) is :func:`register_chain`; every counter that runs up to ``n - 1`` and back to 0 is
:func:`advance_counter` (or :func:`wrapped_increment` where the next value is an expression).
Each place names its signals; these helpers never rename one, so the Verilog keeps its names.

What else the Verilog text depends on: the order in which statements are added (it numbers the
cells; chains built side by side are built stage by stage, one register each), and where an
``If`` stands in the source: Amaranth merges the matches of one condition net at one source line,
so an ``If`` on a constant (a mixed-radix counter's first carry) stays at its caller's line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value

Branch = Iterable | Callable[[], None]


def less(a: Value, b: Value) -> Value:
    """``a < b`` as the sign bit of ``a - b`` (one bit wider than the operands, so it cannot overflow):
    the last sum bit of the subtraction's carry chain, with no LUT after it as a comparison has."""
    return (a - b)[-1]


def numbered(prefix: str, count: int, first: int = 0) -> list[str]:
    """``[prefix<first>, prefix<first + 1>, ...]``, ``count`` names."""
    return [f"{prefix}{first + i}" for i in range(count)]


def register_chain(m: Module, value, names: Sequence[str], reset_less: bool = True, init: int = 0) -> list:
    """``value`` and one register per name, each loading the one before it in ``m``'s ``sync`` domain.

    Parameters
    ----------
    m : Module
    value : Value
        The chain's input (its shape is every register's).
    names : sequence of str
        The registers' names, first to last (none: the chain is ``value`` alone).
    reset_less : bool
        Datapath registers have no reset (vendor blocks can then absorb them); control flags do.
    init : int
        The registers' initial (and reset) value.

    Returns
    -------
    list of Value
        ``[value, r_0, ..., r_{n-1}]``: element c is ``value`` c cycles late.
    """
    chain = [Value.cast(value)]
    for name in names:
        r = Signal(chain[-1].shape(), name=name, reset_less=reset_less, init=init)
        m.d.sync += r.eq(chain[-1])
        chain.append(r)
    return chain


def kept_copies(m: Module, value, names: Sequence[str], reset_less: bool = True) -> list:
    """``value`` one register later, once per name: copies of one register for users spread over the die, so
    that no one flip-flop is routed to all of them. Synthesis merges identical registers; the copies carry
    ``keep``, which :data:`synth.yosys.KEEP_COPIES` moves onto their flip-flops."""
    value = Value.cast(value)
    out = []
    for name in names:
        r = Signal(value.shape(), name=name, reset_less=reset_less, attrs={"keep": 1})
        m.d.sync += r.eq(value)
        out.append(r)
    return out


def delay(m: Module, value, cycles: int, name: str):
    """``value`` through ``cycles`` reset-less registers ``<name>_d0``, ``<name>_d1``, ..."""
    return register_chain(m, value, numbered(f"{name}_d", cycles))[-1]


def all_of(conds: Iterable) -> Value:
    """The AND of ``conds``, a :class:`Const` where they are constants (a condition that always holds is
    dropped), so that :func:`register` does not register it: an operator over constants is not a Const."""
    conds = list(conds)
    if any(isinstance(c, Const) and not c.value for c in conds):
        return Const(0)
    live = [c for c in conds if not isinstance(c, Const)]
    return Cat(*live).all() if live else Const(1)


def register(m: Module, value, name: str, cycles: int = 1, reset_less: bool = True, init: int = 0):
    """``value`` ``cycles`` registers later: one register ``name``, or ``<name>_d0``, ... when
    ``cycles`` is not 1 (the engine's naming; ``functools.partial(register, m)`` is its ``reg``). A
    constant is itself later: no register (a flip-flop from its reset value to the constant would step
    once, and synthesis merges such flip-flops across a network's engines into one long route)."""
    if isinstance(value, Const):
        return value
    names = [name] if cycles == 1 else numbered(f"{name}_d", cycles)
    return register_chain(m, value, names, reset_less=reset_less, init=init)[-1]


def advance_counter(m: Module, counter: Signal, n: int, last=None, at_last: Branch = (),
                    otherwise: Branch = ()) -> None:
    """One step of ``counter`` over ``0 .. n - 1`` in ``m``'s ``sync`` domain (under the caller's
    conditions): 0 after ``n - 1``, else ``counter + 1``.

    Parameters
    ----------
    m : Module
    counter : Signal
    n : int
        The counter's period.
    last : Value or None
        The counter stands at ``n - 1`` (default ``counter == n - 1``; a register kept beside the
        counter takes the comparison off the path).
    at_last, otherwise : iterable of statements, or callable
        What else happens when the counter wraps, or steps: statements added with the counter's
        own, or a function that adds them (a counter nested in the branch).
    """
    last = counter == n - 1 if last is None else last
    with m.If(last):
        _branch(m, counter.eq(0), at_last)
    with m.Else():
        _branch(m, counter.eq(counter + 1), otherwise)


def wrapped_increment(counter: Value, n: int) -> Value:
    """The value after ``counter`` in ``0 .. n - 1`` as a multiplexer (:func:`advance_counter`'s
    step as an expression, for a counter assigned inside other logic)."""
    return Mux(counter == n - 1, 0, counter + 1)


def _branch(m: Module, step, more: Branch) -> None:
    if callable(more):
        m.d.sync += step
        more()
    else:
        m.d.sync += [step, *more]
