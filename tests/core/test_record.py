"""Frozen records (dpcalc.core.record): fields in order, defaults, frozen, replace."""

from __future__ import annotations

from typing import ClassVar

import pytest

from dpcalc.core import record
from dpcalc.core.record import FrozenRecordError, Record


class Base(Record):
    a: int
    b: str = "b"


class Child(Base):
    count: ClassVar[int] = 0
    c: float | None = None


def test_fields_in_order_bases_first_and_class_variables_left_out() -> None:
    assert record.fields(Child) == ("a", "b", "c")
    assert record.fields(Child(1)) == ("a", "b", "c")
    assert record.defaults(Base) == {"a": record.MISSING, "b": "b"}


def test_arguments_by_position_and_keyword_with_defaults() -> None:
    child = Child(1, c=2.5)
    assert (child.a, child.b, child.c) == (1, "b", 2.5)


@pytest.mark.parametrize("arguments, keywords", [((), {}), ((1, "x", 2.0, 3), {}), ((1,), {"a": 2}), ((1,), {"d": 0})])
def test_wrong_arguments_are_refused(arguments: tuple[object, ...], keywords: dict[str, object]) -> None:
    with pytest.raises(TypeError):
        Child(*arguments, **keywords)  # type: ignore[arg-type]


def test_frozen_compared_by_identity_and_replaced() -> None:
    child = Child(1)
    with pytest.raises(FrozenRecordError):
        child.a = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del child.b  # type: ignore[misc]
    changed = record.replace(child, b="z")
    assert (changed.a, changed.b, changed.c) == (1, "z", None) and child.b == "b"
    assert child != Child(1) and child == child
    assert record.is_record(child) and record.is_record(Child) and not record.is_record(object())


class Point(record.Value):
    x: float
    y: float = 0.0


def test_a_value_is_compared_hashed_and_shown_by_its_fields_as_a_frozen_dataclass() -> None:
    assert Point(1.0) == Point(1.0, 0.0) and Point(1.0) != Point(2.0) and Point(1.0) != (1.0, 0.0)
    assert hash(Point(1.0)) == hash(Point(1.0)) and len({Point(1.0), Point(1.0, 0.0)}) == 1
    assert repr(Point(1.0)) == "Point(x=1.0, y=0.0)"


class Notes(record.Mutable):
    title: str
    lines: list[str] = []  # noqa: RUF012 - replaced in __post_init__

    def __post_init__(self) -> None:
        self.lines = list(self.lines)


def test_a_mutable_record_is_assigned_compared_and_unhashable() -> None:
    first, second = Notes("a"), Notes("a")
    first.lines.append("x")
    assert second.lines == [] and first != second and repr(first) == "Notes(title='a', lines=['x'])"
    first.title = "b"
    assert first.title == "b" and record.replace(first, title="c") == Notes("c", ["x"])
    with pytest.raises(TypeError):
        hash(first)
