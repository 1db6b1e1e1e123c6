"""Frozen records: typed, immutable classes of named fields that cost nothing to create at import.

    class Gates(Record):
        max_eps: float | None = None
        max_delta: float | None = None

declares the fields as a frozen dataclass would (annotations, in order, each with its default
or none; a subclass adds its own after its bases'), and type checkers read it as one
(`dataclass_transform`): `Gates(max_eps=1.0)` is checked, and assigning a field is an error;
a `__post_init__` method is called after the fields are set, as a dataclass's is.
Unlike `@dataclass`, nothing is generated when the class is made: `Record.__init__` reads the
fields from the class, so a record class costs about what a plain class does (a frozen
dataclass costs 0.5-1 ms each to make, and every command pays for those of the modules it
imports). A record has no generated repr or eq: it is compared by identity, as a dataclass
declared `repr=False, eq=False` is.

A `Value` is a record compared by its fields (eq, hash and repr as a frozen dataclass's), for
the small results and constants that are compared or shown; a `Mutable` one whose fields may
be assigned (eq and repr as a dataclass's, unhashable), for what is completed in steps (a
command's Report).

`fields` gives a record's field names, `replace` a copy with some fields changed (what
dataclasses.fields and dataclasses.replace do for a dataclass); a field declared
`= factory(dict)` gets a fresh default for each record (a dataclass's `default_factory`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_: Any) -> Any:
        return lambda cls: cls

__all__ = ["MISSING", "FrozenRecordError", "Mutable", "Record", "Value", "defaults", "factory", "fields", "is_record",
           "replace"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # the default of a field declared without one

_Made = TypeVar("_Made")


class _Factory:
    """A field's default made afresh for each record (`factory`)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def factory(make: Callable[[], _Made]) -> _Made:
    """The default of a field that each record gets a fresh one of, `make()` (what
    `dataclasses.field(default_factory=make)` declares): `seen: dict[str, int] = factory(dict)`."""
    return cast(_Made, _Factory(make))


class FrozenRecordError(AttributeError):
    """Raised on assigning or deleting a field of a record (as dataclasses.FrozenInstanceError)."""


class _Fields:
    """What records of every kind share: the annotated class attributes are the fields."""

    # field name -> default (MISSING when it has none), the bases' fields first
    _record_fields: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = dict(cls._record_fields)
        # the class's own annotations (Python 3.10+; not inspect.get_annotations: inspect costs
        # several ms to import, and the core is imported without click, which loads it)
        for name, annotation in cls.__annotations__.items():
            if not str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                declared[name] = cls.__dict__.get(name, MISSING)
        cls._record_fields = declared

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        declared = type(self)._record_fields
        if len(args) > len(declared):
            raise TypeError(f"{type(self).__name__}() takes {len(declared)} arguments, got {len(args)}")
        values = dict(zip(declared, args))
        for name, value in kwargs.items():
            if name not in declared:
                raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {name!r}")
            if name in values:
                raise TypeError(f"{type(self).__name__}() got multiple values for argument {name!r}")
            values[name] = value
        for name, default in declared.items():
            value = values.get(name, default)
            if value is MISSING:
                raise TypeError(f"{type(self).__name__}() missing required argument {name!r}")
            if isinstance(value, _Factory):
                value = value.make()
            object.__setattr__(self, name, value)
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:  # checks of the fields, as a dataclass's __post_init__
            post_init()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._record_fields)


def _equal(self: _Fields, other: object) -> Any:  # bool, or NotImplemented
    if isinstance(other, _Fields) and other.__class__ is self.__class__:
        return bool(self._values() == other._values())
    return NotImplemented


def _shown(self: _Fields) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._record_fields)
    return f"{type(self).__qualname__}({shown})"


@dataclass_transform(frozen_default=True, eq_default=False)
class Record(_Fields):
    """A frozen record, compared by identity (see the module's docstring)."""

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenRecordError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise FrozenRecordError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")


class Value(Record):
    """A frozen record compared by its fields, as a frozen dataclass is: equal to a record of
    the same class with equal fields, hashed by them, and shown as `Name(field=value, ...)`."""

    __eq__ = _equal
    __repr__ = _shown

    def __hash__(self) -> int:
        return hash(self._values())


@dataclass_transform()
class Mutable(_Fields):
    """A record whose fields may be assigned, compared and shown as a (non-frozen) dataclass is:
    equal to one of the same class with equal fields, shown as `Name(field=value, ...)`, unhashable."""

    __eq__ = _equal
    __repr__ = _shown
    __hash__ = None  # type: ignore[assignment]


AnyRecord = TypeVar("AnyRecord", bound=_Fields)


def is_record(value: Any) -> bool:
    """True for a record or a record class."""
    return isinstance(value, _Fields) or (isinstance(value, type) and issubclass(value, _Fields))


def fields(record: _Fields | type[_Fields]) -> tuple[str, ...]:
    """The field names of a record (or a record class), in order."""
    return tuple(record._record_fields)


def defaults(record: type[_Fields]) -> dict[str, Any]:
    """The default of each field of a record class by name (MISSING when it has none), in order."""
    return dict(record._record_fields)


def replace(record: AnyRecord, **changes: Any) -> AnyRecord:
    """A copy of `record` with the fields named in `changes` set to their values."""
    return type(record)(**{**{name: getattr(record, name) for name in record._record_fields}, **changes})
