"""A failing disk without root tricks: os.replace/os.open raise ENOSPC/EROFS under a directory
while a switch is on, and a snapshot of a directory's files to show nothing was half-written."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest


class DiskFault:
    """Makes writes under `root` fail with `code` while `on` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, root: Path, code: int) -> None:
        self.root = str(root)
        self.code = code
        self.on = threading.Event()
        real_replace, real_open = os.replace, os.open

        def replace(src, dst, *a, **kw):
            self._check(_full(dst, kw.get("dst_dir_fd")))
            return real_replace(src, dst, *a, **kw)

        def open_(path, flags, *a, **kw):
            if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and not str(path).endswith(".lock"):
                self._check(_full(path, kw.get("dir_fd")))
            return real_open(path, flags, *a, **kw)

        monkeypatch.setattr(os, "replace", replace)
        monkeypatch.setattr(os, "open", open_)

    def _check(self, path: object) -> None:
        if self.on.is_set() and str(path).startswith(self.root):
            raise OSError(self.code, os.strerror(self.code), str(path))


def _full(path: object, dir_fd: int | None) -> str:
    """The path an *at() call names (writes are made relative to a directory fd)."""
    if dir_fd is None:
        return str(path)
    return os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), str(path))


def board_files(tasks_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(tasks_dir.iterdir()) if p.is_file()}
