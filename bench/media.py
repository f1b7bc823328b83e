"""Benchmark of images for the model: what read_file costs on a picture, and what it sends.

    python bench/media.py [--runs N] [--json]

small_png_ms        median read_file on a 640x480 PNG (sent as it is)
screenshot_ms       median read_file on a 2880x1800 PNG screenshot (scaled to 1568 px)
screenshot_sent_kb  the base64 size of that screenshot as sent
photo_ms            median read_file on a 4032x3024 JPEG photo of random pixels (scaled,
                    re-encoded)
photo_sent_kb       its base64 size as sent (the API's cap is 5120 KB)
noise_png_ms        median read_file on a 1500x1500 PNG of random pixels (6.8 MB: re-encoded
                    until it fits 5 MB)
pdf_20_pages_ms     median read_file on a 20-page PDF
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from PIL import Image

from agent_cli.tools.base import ToolContext
from agent_cli.tools.workspace import workspace_tools


def _image(size: tuple[int, int], fmt: str, noise: bool) -> bytes:
    if noise:
        im = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    else:  # a screenshot-like picture: flat colours, a few bands
        im = Image.new("RGB", size, (240, 240, 240))
        for y in range(0, size[1], 60):
            im.paste((30, 90, 160), (0, y, size[0], y + 20))
    buf = io.BytesIO()
    im.save(buf, fmt)
    return buf.getvalue()


def _pdf(pages: int) -> bytes:
    first, *rest = [Image.new("RGB", (595, 842), "white") for _ in range(pages)]
    buf = io.BytesIO()
    first.save(buf, "PDF", save_all=True, append_images=rest)
    return buf.getvalue()


def measure(runs: int) -> dict[str, float]:
    tool = {t.name: t for t in workspace_tools()}["read_file"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = {
            "small_png": ("small.png", _image((640, 480), "PNG", False)),
            "screenshot": ("shot.png", _image((2880, 1800), "PNG", False)),
            "photo": ("photo.jpg", _image((4032, 3024), "JPEG", True)),
            "noise_png": ("noise.png", _image((1500, 1500), "PNG", True)),
            "pdf_20_pages": ("doc.pdf", _pdf(20)),
        }
        ctx = ToolContext("bench", root)
        out: dict[str, float] = {}
        for key, (name, data) in files.items():
            (root / name).write_bytes(data)
            times, sent = [], 0
            for _ in range(runs):
                start = time.perf_counter()
                result = tool.run(tool.parse({"path": name}), ctx)
                times.append((time.perf_counter() - start) * 1000)
                assert not result.is_error, result.content
                sent = len(result.media[0].source.data)
            out[f"{key}_ms"] = round(statistics.median(times), 1)
            if key in ("screenshot", "photo"):
                out[f"{key}_sent_kb"] = round(sent / 1024)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.runs)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:20} {value}")


if __name__ == "__main__":
    main()
