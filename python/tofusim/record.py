"""Typed views of the JSON objects a result holds: the machinery
(:class:`Record`, :class:`Key`, :class:`Maybe`). The record classes
themselves are in :mod:`tofusim.records`, generated from the core's result
schema.

A result's nested objects — ``r.sim``, ``r.setup``, ``r.latency``,
``r.counter_samples``, a collective's ``c.run`` and ``c.flow`` — are
:class:`Record` subclasses: each key the core writes is a typed attribute
(``r.sim.wall_seconds`` is a ``float``, ``r.setup.router`` a
:class:`RouterSetup`), and the record is still the JSON object, a dict, so
``r.sim["wall_seconds"]``, ``json.dumps(r)`` and ``r.setup == {...}`` keep
working. The attributes are declared once, as :class:`Key` (always there)
or :class:`Maybe` (``None`` when the JSON has null or lacks the key: a
flow-model run has no event count), and nested objects are wrapped when
the record is made.

>>> from tofusim.records import Latency, SimInfo
>>> s = SimInfo({"cycles": 6000, "wall_seconds": 0.5, "peak_memory_bytes": 2**20, "partitions": None})
>>> s.cycles, s.wall_seconds, s.partitions, s["cycles"]
(6000, 0.5, None, 6000)
>>> Latency({"count": 3, "mean": 10.0, "p50": 9.0, "p99": 20.0, "max": 21.0}).p99
20.0
"""

from __future__ import annotations

from typing import Any, Callable, Generic, TypeVar, overload

T = TypeVar("T")
R = TypeVar("R", bound="Record")


class _Field:
    """What :class:`Key` and :class:`Maybe` share: the key (the attribute's
    name) and the conversion of its JSON value."""

    def __init__(self, conv: Callable[[Any], Any], doc: str = "") -> None:
        self.conv = conv
        self.name = ""
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def nested(self) -> tuple[type[Record] | None, bool]:
        """The record class this key holds, and whether as a list of them."""
        item = getattr(self.conv, "record_item", None)
        if item is not None:
            return item, True
        if isinstance(self.conv, type) and issubclass(self.conv, Record):
            return self.conv, False
        return None, False

    def _value(self, obj: Record) -> Any:
        v = dict.get(obj, self.name)
        # Records (and lists of them) were made with the record that holds them.
        if v is None or self.nested()[0] is not None and isinstance(v, (Record, list)):
            return v
        return self.conv(v)


class Key(_Field, Generic[T]):
    """A key the JSON object always has, as an attribute of type ``T``
    (``conv`` of its value; a :class:`Record` class for a nested object)."""

    def __init__(self, conv: Callable[[Any], T], doc: str = "") -> None:
        super().__init__(conv, doc)

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Key[T]: ...

    @overload
    def __get__(self, obj: Record, owner: type | None = None) -> T: ...

    def __get__(self, obj: Record | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        if dict.get(obj, self.name) is None:
            raise AttributeError(f"{type(obj).__name__} has no {self.name!r} here (keys: {', '.join(sorted(obj))})")
        return self._value(obj)


class Maybe(_Field, Generic[T]):
    """A key that may be missing or null, as an attribute of type ``T | None``."""

    def __init__(self, conv: Callable[[Any], T], doc: str = "") -> None:
        super().__init__(conv, doc)

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Maybe[T]: ...

    @overload
    def __get__(self, obj: Record, owner: type | None = None) -> T | None: ...

    def __get__(self, obj: Record | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return self._value(obj)


def list_of(kind: type[R]) -> Callable[[Any], list[R]]:
    """The conversion of a JSON list of objects into a list of ``kind``."""
    def conv(v: Any) -> list[R]:
        return [x if isinstance(x, kind) else kind(x) for x in v]

    conv.record_item = kind  # type: ignore[attr-defined]
    return conv


# A JSON object: str keys, any values.
class Record(dict):  # type: ignore[type-arg]
    """A JSON object of a result with its keys as typed attributes (the
    class's :class:`Key` and :class:`Maybe` declarations), still a dict."""

    #: The keys that hold records (or lists of them), found when a subclass is made.
    _nested: dict[str, tuple[type[Record], bool]] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        nested = {}
        for klass in reversed(cls.__mro__):
            for name, f in vars(klass).items():
                if isinstance(f, _Field):
                    kind, many = f.nested()
                    if kind is not None:
                        nested[name] = (kind, many)
        cls._nested = nested

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        super().__init__(data or {})
        for name, (kind, many) in self._nested.items():
            v = dict.get(self, name)
            if many and isinstance(v, list):
                self[name] = [x if isinstance(x, kind) or not isinstance(x, dict) else kind(x) for x in v]
            elif not many and isinstance(v, dict) and not isinstance(v, kind):
                self[name] = kind(v)

    @classmethod
    def fields(cls) -> list[str]:
        """The keys declared as attributes."""
        return [name for klass in reversed(cls.__mro__) for name, f in vars(klass).items() if isinstance(f, _Field)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else list(v)


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else dict(v)


def _value(v: Any) -> Any:
    """A value kept as the JSON has it (one of several shapes)."""
    return v
