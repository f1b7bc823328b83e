"""Fixtures of the sandbox tests."""

from __future__ import annotations

import shutil

import pytest

from tests.support.sandbox import outside_dir


@pytest.fixture
def outside():
    """A directory no sandboxed command may write (outside the workspace and /tmp)."""
    path = outside_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)
