"""Images and PDFs for the model: recognized by their content (magic bytes, never the name),
fitted into the Messages API's limits, and described in one line of text.

The API's limits (vision and PDF support pages): an image is PNG, JPEG, GIF or WebP, at most
5 MB once base64-encoded and 8000 px on either side (2000 px when a request holds more than
20 images); Anthropic recommends at most 1568 px on the long edge (the API scales larger ones
down itself, so sending more only costs bytes). A PDF is at most 100 pages, unencrypted, and
the whole request at most 32 MB. So an image larger than 1568 px is scaled down to it (which
also keeps a request of many images valid), then re-encoded smaller until its base64 fits;
a PDF is sent whole when it is under our byte cap and the page cap, else refused by name.
Pillow does the decoding and scaling: it is the standard imaging library for Python, reads
all four formats (first frame of an animation), and honours EXIF orientation.
"""

from __future__ import annotations

import base64
import io
import re
from dataclasses import dataclass

from ..errors import ToolError
from ..models.base import DocumentBlock, ImageBlock, MediaSource

IMAGE_BASE64_MAX = 5 * 1024 * 1024  # the API refuses a base64 image longer than this
IMAGE_EDGE_MAX = 8000  # the API refuses an image wider or taller than this
LONG_EDGE = 1568  # Anthropic's recommended long edge; larger images are scaled to it
IMAGE_PIXELS_MAX = 100_000_000  # larger pictures are refused rather than decoded here
PDF_BYTES_MAX = 10 * 1024 * 1024  # raw; 13.3 MB base64, so two fit in one 32 MB request
PDF_PAGES_MAX = 100

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
)
_FORMAT = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}
_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def sniff(data: bytes) -> str | None:
    """The media type of an image or PDF by its first bytes, None for anything else."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    return None


@dataclass(frozen=True)
class Media:
    """An image or PDF ready for the model, and the line that says what was sent."""

    block: ImageBlock | DocumentBlock
    text: str
    size: tuple[int, int] | None = None  # an image's original width and height


def load_media(data: bytes, name: str) -> Media | None:
    """The block for `data` when it is an image or a PDF (None: it is neither); ToolError
    naming the file when it is one the API could not take."""
    kind = sniff(data)
    if kind is None:
        return None
    if kind == "application/pdf":
        return _pdf(data, name)
    return _image(data, kind, name)


def human_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def _pdf(data: bytes, name: str) -> Media:
    if len(data) > PDF_BYTES_MAX:
        raise ToolError(f"{name} is a {human_bytes(len(data))} PDF, over the "
                        f"{human_bytes(PDF_BYTES_MAX)} a PDF may be sent as; split it or "
                        "extract its text with a shell command")
    if b"/Encrypt" in data:
        raise ToolError(f"{name} is an encrypted PDF; the model reads only unencrypted ones")
    pages = len(_PAGE.findall(data))  # page objects in the clear (0: in compressed streams)
    if pages > PDF_PAGES_MAX:
        raise ToolError(f"{name} has {pages} pages, over the {PDF_PAGES_MAX} a PDF may have; "
                        "split it first")
    counted = f"{pages} page{'s' if pages != 1 else ''}, " if pages else ""
    label = f"{name} ({counted}{human_bytes(len(data))})"
    source = MediaSource(media_type="application/pdf", data=_b64(data))
    text = (f"PDF {label}: sent whole as a document (caps: {PDF_PAGES_MAX} pages, "
            f"{human_bytes(PDF_BYTES_MAX)}).")
    return Media(DocumentBlock(source=source, label=label, pages=pages), text)


def _image(data: bytes, kind: str, name: str) -> Media:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            size = im.size
            if size[0] * size[1] > IMAGE_PIXELS_MAX:
                raise ToolError(f"{name} is {size[0]}x{size[1]} pixels, too large to scale "
                                f"here (over {IMAGE_PIXELS_MAX // 1_000_000} megapixels)")
            if kind == "image/jpeg" and max(size) > LONG_EDGE:  # decode at a reduced scale
                im.draft("RGB", (-(-size[0] * LONG_EDGE // max(size)),
                                 -(-size[1] * LONG_EDGE // max(size))))
            im.load()
            fits = max(size) <= LONG_EDGE and _fits(data)
            if fits:
                body, out_kind, out_size = data, kind, size
            else:
                body, out_kind, out_size = _shrunk(im, kind)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError,
            Image.DecompressionBombError) as exc:
        raise ToolError(f"{name} looks like {kind} but cannot be decoded: {exc}") from None
    label = f"{name} {size[0]}x{size[1]}"
    text = f"Image {name}: {size[0]}x{size[1]} {_FORMAT[kind]} ({human_bytes(len(data))})"
    if body is not data:
        text += (f", sent as {out_size[0]}x{out_size[1]} {_FORMAT[out_kind]} "
                 f"({human_bytes(len(body))}) to fit the API's limits "
                 f"({LONG_EDGE} px long edge, {human_bytes(IMAGE_BASE64_MAX)} base64)")
    source = MediaSource(media_type=out_kind, data=_b64(body))
    return Media(ImageBlock(source=source, label=label), text + ".", size)


def _shrunk(im, kind: str) -> tuple[bytes, str, tuple[int, int]]:
    """The picture scaled to the long edge, re-encoded until its base64 fits: PNG for a
    picture with transparency or from a lossless format, else JPEG, then lower JPEG quality,
    then smaller sizes."""
    from PIL import Image, ImageOps

    im.seek(0)  # an animation: its first frame, as the API reads it
    frame = ImageOps.exif_transpose(im)
    frame.thumbnail((LONG_EDGE, LONG_EDGE), Image.Resampling.LANCZOS)
    alpha = frame.mode in ("RGBA", "LA", "PA") or "transparency" in frame.info
    lossless = alpha or kind in ("image/png", "image/gif")
    edge = max(frame.size)
    while True:
        if lossless:
            body = _encode(frame.convert("RGBA" if alpha else "RGB"), "PNG")
            if _fits(body):
                return body, "image/png", frame.size
        rgb = frame.convert("RGB")
        for quality in (85, 70, 55):
            body = _encode(rgb, "JPEG", quality=quality)
            if _fits(body):
                return body, "image/jpeg", frame.size
        edge = edge * 3 // 4
        if edge < 64:
            raise ToolError("the picture cannot be made small enough for the API")
        frame.thumbnail((edge, edge), Image.Resampling.LANCZOS)


def _encode(im, fmt: str, **opts: int) -> bytes:
    """`im` in `fmt`; JPEG with optimized Huffman tables (cheap), PNG at zlib's default
    level (`optimize` would cost four times the time for ~5% fewer bytes)."""
    buf = io.BytesIO()
    im.save(buf, fmt, **opts, **({"optimize": True} if fmt == "JPEG" else {}))
    return buf.getvalue()


def _fits(body: bytes) -> bool:
    return (len(body) + 2) // 3 * 4 <= IMAGE_BASE64_MAX


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
