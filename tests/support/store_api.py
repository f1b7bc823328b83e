"""Does a store class offer what agent_cli/store_api.py says the rest of agent-cli calls?
Every method and property of the interface, with the same parameter names, kinds and
defaults-or-not (annotations aside). A backend's tests can call `mismatches` on its classes."""

from __future__ import annotations

import inspect
from typing import Any


def _members(proto: type) -> dict[str, Any]:
    skip = set(dir(object)) | {"_is_protocol", "_is_runtime_protocol", "__protocol_attrs__",
                                "__non_callable_proto_members__", "__abstractmethods__",
                                "__parameters__", "__orig_bases__", "__annotations__",
                                "__dict__", "__weakref__", "__module__", "__qualname__",
                                "_abc_impl", "__slots__", "__static_attributes__",
                                "__firstlineno__", "__type_params__"}
    return {k: v for k, v in vars(proto).items() if k not in skip}


def _shape(fn: Any) -> list[tuple[str, Any, bool]]:
    params = list(inspect.signature(fn).parameters.values())[1:]  # self
    return [(p.name, p.kind, p.default is inspect.Parameter.empty) for p in params]


def mismatches(cls: type, proto: type) -> list[str]:
    """One line per way `cls` differs from `proto` ([] when it offers all of it)."""
    out = []
    for name in getattr(proto, "__annotations__", {}):
        code = getattr(cls.__init__, "__code__", None)  # set in __init__ (self.name = ...)
        if not hasattr(cls, name) and (code is None or name not in code.co_names):
            out.append(f"{cls.__name__}.{name}: missing attribute")
    for name, member in _members(proto).items():
        got = inspect.getattr_static(cls, name, None)
        if got is None:
            out.append(f"{cls.__name__}.{name}: missing")
        elif isinstance(member, property):
            if not isinstance(got, property):
                out.append(f"{cls.__name__}.{name}: not a property")
        elif not callable(got):
            out.append(f"{cls.__name__}.{name}: not a method")
        else:
            want, have = _shape(member), _shape(got)
            variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
            required = [p for p in have[len(want):] if p[2] and p[1] not in variadic]
            if have[:len(want)] != want or required:  # extra parameters need defaults
                out.append(f"{cls.__name__}.{name}{inspect.signature(got)} differs from "
                           f"{inspect.signature(member)}")
    return out
