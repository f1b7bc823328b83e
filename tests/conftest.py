"""Shared fixtures: every test gets its own temporary workdir."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d
