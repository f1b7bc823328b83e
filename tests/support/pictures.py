"""Small images and PDFs made in the test with Pillow (no binary fixtures)."""

from __future__ import annotations

import base64
import io
import os

from PIL import Image

FORMATS = {"png": "PNG", "jpeg": "JPEG", "gif": "GIF", "webp": "WEBP"}


def picture(kind: str = "png", size: tuple[int, int] = (64, 48), noise: bool = False) -> bytes:
    """An image in `kind` (png, jpeg, gif, webp): one colour, or random pixels (`noise`,
    which no encoder can shrink much)."""
    if noise:
        im = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    else:
        im = Image.new("RGB", size, (200, 40, 90))
    buf = io.BytesIO()
    im.save(buf, FORMATS[kind])
    return buf.getvalue()


def pdf(pages: int = 2) -> bytes:
    """A real PDF of `pages` blank pages."""
    first, *rest = [Image.new("RGB", (60, 80), "white") for _ in range(pages)]
    buf = io.BytesIO()
    first.save(buf, "PDF", save_all=True, append_images=rest)
    return buf.getvalue()


def size_of(b64: str) -> tuple[int, int]:
    """The width and height of a base64 image."""
    with Image.open(io.BytesIO(base64.b64decode(b64))) as im:
        return im.size


def format_of(b64: str) -> str:
    with Image.open(io.BytesIO(base64.b64decode(b64))) as im:
        return im.format or ""
