"""Wire formats are pydantic models built on first use (defer_build), maybe from any thread.

pydantic before 2.14 raced there: two threads building the same model at once could see a
half-built class ("MockCoreSchema ... this is a bug!") — the lead and a teammate asking for
the tool specs at once. pyproject requires a pydantic that serializes the build.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


def _fresh_models() -> type[BaseModel]:
    class Inner(BaseModel):
        model_config = ConfigDict(defer_build=True)

        a: int = 0
        b: list[str] = Field(default_factory=list)

    class Outer(BaseModel):
        model_config = ConfigDict(defer_build=True)

        kind: Literal["x"] = "x"
        inner: Inner = Field(default_factory=Inner)
        extra: dict[str, Any] = {}

    return Outer


def test_first_use_from_eight_threads_at_once_never_sees_a_half_built_model():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible inside the build
    errors: list[str] = []
    try:
        for _ in range(60):
            cls = _fresh_models()
            barrier = threading.Barrier(8)

            def use(i: int, cls: type[BaseModel] = cls, barrier: threading.Barrier = barrier):
                barrier.wait(timeout=10)
                try:
                    if i % 2:
                        assert "inner" in cls.model_json_schema()["properties"]
                    else:
                        assert cls.model_validate({"inner": {"a": 1}}).inner.a == 1
                except Exception as exc:  # noqa: BLE001 - collected and reported below
                    errors.append(f"{type(exc).__name__}: {exc}")

            threads = [threading.Thread(target=use, args=(i,)) for i in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=30)
            assert not any(t.is_alive() for t in threads)
    finally:
        sys.setswitchinterval(old)
    assert errors == []

