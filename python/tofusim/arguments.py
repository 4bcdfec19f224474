"""The Python API's boundary: each argument a public function takes is
checked here once, and a wrong one is refused as a :class:`ConfigError`
naming it — never a bare ``TypeError``, ``OverflowError`` or
``UnicodeEncodeError`` from the compiled core.

Errors name where the value came from: ``<arguments>`` for a call from
Python, ``<command line>`` when the ``tofusim`` command made the call
(:data:`tofusim.origin.WHERE`, set by the command's entry point).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable

from ._core import ConfigError
from .origin import WHERE
from .units import parse_bytes

#: The largest whole number the core takes (u64; seeds may use all of it).
U64_MAX = 2**64 - 1


def refuse(name: str, expected: str, got: Any) -> ConfigError:
    shown = repr(got)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return ConfigError(f"{WHERE.get()}: {name}: expected {expected}, got {shown}")


def relabel(e: ConfigError) -> ConfigError:
    """A refusal from the core, which names a system or size given as an
    argument ``<command line>``, with the origin of this call instead."""
    text = str(e)
    where = WHERE.get()
    if where != "<command line>" and text.startswith("<command line>"):
        return ConfigError(where + text[len("<command line>"):])
    return e


def core_call(f: Callable[..., Any], *args: Any) -> Any:
    """Calls the compiled core's ``f``; its refusal comes back with this
    call's origin (:func:`relabel`)."""
    try:
        return f(*args)
    except ConfigError as e:
        raise relabel(e) from None


def text(name: str, value: Any) -> str:
    """A string the core can read (UTF-8: no lone surrogates)."""
    if not isinstance(value, str):
        raise refuse(name, "text (a str)", value)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise refuse(name, "text without lone surrogates (UTF-8)", value) from None
    return value


def whole(name: str, value: Any, lo: int = 0, hi: int = U64_MAX) -> int:
    """A whole number in ``[lo, hi]`` (not a bool, a float or a string)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise refuse(name, f"a whole number from {lo:,} to {hi:,}", value)
    if not lo <= value <= hi:
        raise refuse(name, f"a whole number from {lo:,} to {hi:,}", value)
    return int(value)


def size(name: str, value: Any, lo: int = 0, hi: int = U64_MAX) -> int:
    """Bytes: a whole number, or a size with its unit (``"64KiB"``)."""
    if isinstance(value, str):
        value = parse_bytes(text(name, value), name)
    return whole(name, value, lo, hi)


def number(name: str, value: Any, lo: float = 0.0, hi: float = float("inf")) -> float:
    """A finite real number in ``[lo, hi]``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise refuse(name, f"a number from {lo:g} to {hi:g}", value)
    v = float(value)
    if not (lo <= v <= hi) or v != v or v in (float("inf"), float("-inf")):
        raise refuse(name, f"a finite number from {lo:g} to {hi:g}", value)
    return v


#: A duration's units, in minutes.
_MINUTES = {"s": 1 / 60, "min": 1.0, "h": 60.0, "d": 1440.0}


def minutes(name: str, value: Any) -> float:
    """A time budget in minutes: a number of minutes, a duration with its
    unit (``"90s"``, ``"30min"``, ``"2h"``, ``"1d"``), or ``"none"`` /
    infinity for no limit (returned as infinity)."""
    if isinstance(value, str):
        t = text(name, value).strip().lower()
        if t == "none":
            return float("inf")
        for unit in sorted(_MINUTES, key=len, reverse=True):
            if t.endswith(unit):
                try:
                    v = float(t[: -len(unit)])
                except ValueError:
                    break
                if v >= 0 and v == v and v != float("inf"):
                    return v * _MINUTES[unit]
                break
        raise refuse(name, "a duration such as 90s, 30min, 2h or 1d, or none", value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == float("inf"):
        return float("inf")
    return number(name, value, 0.0, 1e12)


def flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise refuse(name, "True or False", value)
    return value


def ranks(name: str, values: Any, hi: int = 2**32 - 1) -> list[int]:
    """A list of whole numbers from 0 to ``hi`` (node or rank ids)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise refuse(name, "a list of whole numbers", values)
    return [whole(f"{name}[{i}]", v, 0, hi) for i, v in enumerate(values)]


def placement(spec: dict[str, Any], ppn: Any, where: Any) -> dict[str, Any]:
    """``spec`` with the ranks per node and their placement: ``where`` is
    ``"block"``, ``"cyclic"`` or a list of node ids, one per rank (a map)."""
    spec["ppn"] = whole("ppn", ppn, 1, 2**32 - 1)
    if isinstance(where, str):
        spec["placement"] = text("placement", where)
    else:
        spec["rank_map"] = ranks("placement", where)
    return spec


def callback(name: str, f: Any, arguments: int = 1) -> Callable[..., Any] | None:
    """A function the run calls with ``arguments`` positional values, or
    None. An exception raised inside it stops the run and comes back as a
    ConfigError naming the callback (the original chained)."""
    if f is None:
        return None
    if not callable(f):
        raise refuse(name, f"a function of {arguments} argument(s) or None", f)
    try:
        inspect.signature(f).bind(*range(arguments))
    except TypeError:
        raise refuse(name, f"a function taking {arguments} positional argument(s)", f) from None
    except ValueError:
        pass  # a builtin without a signature: called as it is

    def guarded(*args: Any) -> Any:
        try:
            return f(*args)
        except KeyboardInterrupt:
            raise
        except ConfigError:
            raise
        except Exception as e:  # noqa: BLE001 - any failure of the user's function stops the run
            raise ConfigError(f"{WHERE.get()}: {name}: the function raised {type(e).__name__}: {e}") from e

    return guarded
