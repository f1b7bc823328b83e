"""Fixtures of the sandbox tests."""

from __future__ import annotations

import shutil

import pytest
from support.sandbox import RecordingServer, outside_dir


@pytest.fixture
def outside():
    """A directory no sandboxed command may write (outside the workspace and /tmp)."""
    path = outside_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def loopback():
    """A loopback HTTP server recording what reaches it."""
    server = RecordingServer()
    yield server
    server.close()
