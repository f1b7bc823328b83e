"""The Messages API's rules for images and PDFs, as the stub server enforces them.

`check_media(body)` walks every user message's image and document blocks, also inside
tool_result content, and returns the API-style 400 message for the first one the real API
would refuse: a source that is not base64, a media type it does not take or that does not
match the bytes, data that is not base64, an image over 5 MB of base64 or 8000 px on a side
(2000 px when the request holds more than 20 images), a document that is not a PDF, or a
field the API does not know (our own `label` must never reach the wire).
"""

from __future__ import annotations

import base64
import binascii
import io
from typing import Any

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
IMAGE_BASE64_MAX = 5 * 1024 * 1024
EDGE_MAX, EDGE_MAX_MANY, MANY = 8000, 2000, 20
_FIELDS = {"image": {"type", "source", "cache_control"},
           "document": {"type", "source", "cache_control", "title", "context", "citations"}}
_RESULT_PARTS = ("text", "image", "document")


def check_media(body: dict[str, Any]) -> str | None:
    found, err = _media_blocks(body.get("messages") or [])
    if err:
        return err
    images = sum(1 for _, b in found if b.get("type") == "image")
    for where, block in found:
        err = _check(block, where, EDGE_MAX_MANY if images > MANY else EDGE_MAX)
        if err:
            return err
    return None


def _media_blocks(messages: list[Any]) -> tuple[list[tuple[str, dict]], str | None]:
    """(where, block) for every image and document, or the error of a malformed
    tool_result content."""
    found: list[tuple[str, dict]] = []
    for i, msg in enumerate(messages):
        content = msg.get("content") if isinstance(msg, dict) else None
        for j, b in enumerate(content if isinstance(content, list) else []):
            where = f"messages.{i}.content.{j}"
            kind = b.get("type") if isinstance(b, dict) else None
            if kind in _FIELDS:
                found.append((where, b))
            elif kind == "tool_result":
                err = _result_parts(b.get("content"), where, found)
                if err:
                    return found, err
    return found, None


def _result_parts(inner: Any, where: str, found: list[tuple[str, dict]]) -> str | None:
    if inner is None or isinstance(inner, str):
        return None
    if not isinstance(inner, list):
        return f"{where}.content: Input should be a valid string or list"
    for k, part in enumerate(inner):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in _RESULT_PARTS:
            return f"{where}.content.{k}.type: Input tag {kind!r} does not match"
        if kind == "text" and not part.get("text"):
            return f"{where}.content.{k}: text content blocks must be non-empty"
        if kind != "text":
            found.append((f"{where}.content.{k}", part))
    return None


def _check(block: dict, where: str, edge_max: int) -> str | None:
    kind = block["type"]
    extra = sorted(set(block) - _FIELDS[kind])
    if extra:
        return f"{where}.{kind}.{extra[0]}: Extra inputs are not permitted"
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        return f"{where}.{kind}.source: the stub takes base64 sources only"
    media_type, data = source.get("media_type"), source.get("data")
    allowed = IMAGE_TYPES if kind == "image" else ("application/pdf",)
    if media_type not in allowed:
        return (f"{where}.{kind}.source.base64.media_type: Input should be "
                + " or ".join(repr(t) for t in allowed))
    try:
        raw = base64.b64decode(data if isinstance(data, str) else "", validate=True)
    except (binascii.Error, ValueError):
        return f"{where}.{kind}.source.base64.data: invalid base64 data"
    if not raw:
        return f"{where}.{kind}.source.base64.data: empty data"
    if kind == "document":
        return None if raw.startswith(b"%PDF-") else f"{where}: the PDF specified was not valid"
    if len(data) > IMAGE_BASE64_MAX:
        return (f"{where}.image.source.base64: image exceeds 5 MB maximum: {len(data)} bytes "
                f"> {IMAGE_BASE64_MAX} bytes")
    return _check_pixels(raw, media_type, where, edge_max)


def _check_pixels(raw: bytes, media_type: str, where: str, edge_max: int) -> str | None:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as im:
            fmt, size = im.format, im.size
    except (UnidentifiedImageError, OSError):
        return f"{where}.image.source.base64.data: Could not process image"
    if f"image/{(fmt or '').lower()}" != media_type:
        return (f"{where}.image.source.base64.data: Image does not match the provided media "
                f"type {media_type}")
    if max(size) > edge_max:
        many = " for many-image requests" if edge_max == EDGE_MAX_MANY else ""
        return (f"{where}.image.source.base64.data: At least one of the image dimensions "
                f"exceed max allowed size{many}: {edge_max} pixels")
    return None
