"""read_file on an image or a PDF: the model gets a picture or a document, recognized by
content, fitted into the API's limits, with what was sent said in words; confinement holds."""

from __future__ import annotations

import base64
import os

import pytest
from support.pictures import format_of, pdf, picture, size_of

from agent_cli.tools import media
from agent_cli.tools.base import ToolContext, ToolOutput
from agent_cli.tools.workspace import workspace_tools


@pytest.fixture
def read(workdir):
    tool = {t.name: t for t in workspace_tools()}["read_file"]
    ctx = ToolContext(agent="alice", workdir=workdir)
    return lambda path: tool.run(tool.parse({"path": path}), ctx)


@pytest.mark.parametrize("kind", ["png", "jpeg", "gif", "webp"])
def test_each_image_format_is_known_by_its_bytes_not_its_name(read, workdir, kind):
    (workdir / "snapshot.dat").write_bytes(picture(kind, (64, 48)))
    out = read("snapshot.dat")
    assert not out.is_error, out.content
    [block] = out.media
    assert block.source.media_type == f"image/{kind}"
    assert size_of(block.source.data) == (64, 48)
    assert out.content.startswith(f"Image snapshot.dat: 64x48 {kind.upper()} (")
    assert "sent as" not in out.content  # small enough: sent exactly as it is on disk
    assert base64.b64decode(block.source.data) == (workdir / "snapshot.dat").read_bytes()


def test_a_large_screenshot_is_scaled_to_the_recommended_edge_and_its_size_said(read, workdir):
    (workdir / "shot.png").write_bytes(picture("png", (4000, 3000)))
    out = read("shot.png")
    [block] = out.media
    assert size_of(block.source.data) == (1568, 1176)
    assert out.content.startswith("Image shot.png: 4000x3000 PNG")
    assert "sent as 1568x1176 PNG" in out.content
    assert block.label == "shot.png 4000x3000"


def test_a_picture_too_heavy_for_5_mb_is_reencoded_until_it_fits(read, workdir):
    heavy = picture("png", (1500, 1500), noise=True)  # random pixels: ~6.8 MB as PNG
    assert len(heavy) * 4 / 3 > media.IMAGE_BASE64_MAX
    (workdir / "noise.png").write_bytes(heavy)
    out = read("noise.png")
    [block] = out.media
    assert len(block.source.data) <= media.IMAGE_BASE64_MAX
    assert block.source.media_type == "image/jpeg"
    assert format_of(block.source.data) == "JPEG"
    assert "sent as 1500x1500 JPEG" in out.content


def test_a_text_file_named_like_an_image_is_read_as_text(read, workdir):
    (workdir / "notes.png").write_text("just text\n")
    out = read("notes.png")
    assert out.media == [] and out.content == "     1\tjust text"


def test_a_broken_image_is_one_clear_error_naming_the_file(read, workdir):
    (workdir / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"not really" * 10)
    out = read("broken.png")
    assert out.is_error and out.content.startswith("broken.png looks like image/png but "
                                                   "cannot be decoded")


def test_a_pdf_is_a_document_with_its_pages_and_the_caps_said(read, workdir):
    (workdir / "spec.pdf").write_bytes(pdf(3))
    out = read("spec.pdf")
    [block] = out.media
    assert block.type == "document" and block.source.media_type == "application/pdf"
    assert base64.b64decode(block.source.data) == (workdir / "spec.pdf").read_bytes()
    assert block.pages == 3
    assert out.content.startswith("PDF spec.pdf (3 pages, ")
    assert "caps: 100 pages, 10.0 MB" in out.content


def test_pdfs_over_the_page_or_byte_cap_or_encrypted_are_refused_by_name(read, workdir,
                                                                          monkeypatch):
    (workdir / "long.pdf").write_bytes(pdf(101))
    out = read("long.pdf")
    assert out.is_error and out.media == []
    assert out.content == "long.pdf has 101 pages, over the 100 a PDF may have; split it first"
    (workdir / "locked.pdf").write_bytes(pdf(1).replace(b"/Root", b"/Encrypt 9 0 R /Root"))
    assert "encrypted PDF" in read("locked.pdf").content
    monkeypatch.setattr(media, "PDF_BYTES_MAX", 1000)
    big = read("long.pdf")
    assert big.is_error and "over the 1000 bytes a PDF may be sent as" in big.content


def test_confinement_is_unchanged_for_pictures(read, workdir, tmp_path):
    outside = tmp_path / "secret.png"
    outside.write_bytes(picture("png"))
    (workdir / "link.png").symlink_to(outside)
    os.mkfifo(workdir / "pipe.png")
    for path in ("link.png", "../secret.png", str(outside), "pipe.png"):
        out = read(path)
        assert out.is_error and out.media == [], path


def test_a_result_with_media_is_text_then_parts():
    block = media.load_media(picture("png"), "a.png").block
    content = ToolOutput("seen", media=[block]).result_content()
    assert [p.type for p in content] == ["text", "image"] and content[0].text == "seen"
    assert ToolOutput("").result_content() == "(no output)"


def test_a_large_photo_is_turned_upright_as_its_exif_says(read, workdir):
    import io

    from PIL import Image

    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: the camera was turned; the picture is 90 degrees off
    buf = io.BytesIO()
    Image.new("RGB", (3000, 1500), (10, 200, 10)).save(buf, "JPEG", exif=exif)
    (workdir / "photo.jpg").write_bytes(buf.getvalue())
    out = read("photo.jpg")
    [block] = out.media
    assert size_of(block.source.data) == (784, 1568)  # upright: taller than wide
    assert out.content.startswith("Image photo.jpg: 3000x1500 JPEG")
