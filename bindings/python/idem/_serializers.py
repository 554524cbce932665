# SPDX-License-Identifier: MIT
"""How a tool's result that is not plain JSON is stored (idem.Serializer).

A result is stored as JSON.  Dataclass instances and Pydantic models
(anywhere in a result or in the arguments) are stored as their JSON form:
dataclasses.asdict(x), x.model_dump(mode="json").  A tool's serializer
decides, besides, what its callers get back, on the first arrival and on
every replay alike (the recorded JSON, given to from_json):

    @calls.tool(kind="local", serializer=Order)      # a dataclass or a model
    def place_order(db, sku, qty) -> Order: ...      # (or inferred from -> Order)

    class Money(idem.Serializer):                    # any other type
        def to_json(self, value): return {"cents": value.cents}
        def from_json(self, data): return Cents(data["cents"])
"""
from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any, Callable, Optional


class Serializer:
    """A tool's result serializer: to_json(value) gives the JSON value to
    store (a dict, a list, a str, a number, True/False/None, nested);
    from_json(data) gives back what the caller gets from the recorded JSON,
    on the first arrival and on every replay.  The default keeps the
    value: subclass and override both (as Powertools' output
    serializers)."""

    def to_json(self, value: Any) -> Any:
        return value

    def from_json(self, data: Any) -> Any:
        return data


def _is_model_class(t: Any) -> bool:
    """A Pydantic model class: 2 (model_validate) or 1 (parse_obj)."""
    return isinstance(t, type) and (
        hasattr(t, "model_validate") and hasattr(t, "model_dump") or
        hasattr(t, "parse_obj") and hasattr(t, "__fields__") and hasattr(t, "json"))


def plain(value: Any) -> Any:
    """The JSON form of a dataclass instance or a Pydantic model, for
    json.dumps(default=...); TypeError for anything else."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if not isinstance(value, type):
        dump = getattr(value, "model_dump", None)
        if callable(dump):
            return dump(mode="json")                    # Pydantic 2
        if _is_model_class(type(value)):
            return json.loads(value.json())             # Pydantic 1
    raise TypeError("Object of type %s is not JSON serializable" % type(value).__name__)


class TypeSerializer(Serializer):
    """serializer=SomeType: a dataclass, or a Pydantic model class."""

    def __init__(self, cls: type):
        self.cls = cls

    def to_json(self, value: Any) -> Any:
        if isinstance(value, self.cls):
            return plain(value)
        return value

    def from_json(self, data: Any) -> Any:
        if _is_model_class(self.cls):
            if hasattr(self.cls, "model_validate"):
                return self.cls.model_validate(data)
            return self.cls.parse_obj(data)              # type: ignore[attr-defined]
        if isinstance(data, dict):
            return self.cls(**data)
        return self.cls(data)

    def __repr__(self) -> str:
        return "TypeSerializer(%s)" % self.cls.__qualname__


def serializer_for(given: Any, fn: Callable[..., Any], tname: str) -> Optional[Serializer]:
    """The tool's serializer from serializer=, or from fn's return
    annotation (a dataclass or a Pydantic model class); None: results are
    stored and handed back as their JSON."""
    if given is None:
        try:
            ret = typing.get_type_hints(fn).get("return")
        except Exception:
            ret = None
        if isinstance(ret, type) and (dataclasses.is_dataclass(ret) or _is_model_class(ret)):
            return TypeSerializer(ret)
        return None
    if isinstance(given, type):
        if dataclasses.is_dataclass(given) or _is_model_class(given):
            return TypeSerializer(given)
        if issubclass(given, Serializer):
            raise TypeError("idem: tool %s: serializer=%s is a class; give an instance:"
                            " serializer=%s()" % (tname, given.__name__, given.__name__))
    elif callable(getattr(given, "to_json", None)) and \
            callable(getattr(given, "from_json", None)):
        return given                                        # type: ignore[no-any-return]
    raise TypeError("idem: tool %s: serializer must be a dataclass, a Pydantic model"
                    " class, or an object with to_json(value) and from_json(data)"
                    " (an idem.Serializer), not %r" % (tname, given))
