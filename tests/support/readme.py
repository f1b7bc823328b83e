"""The README's demo prompts, read from README.md itself (its ```prompt blocks)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
PROMPT_BLOCK_RE = re.compile(r"^```prompt\n(.*?)\n```$", re.MULTILINE | re.DOTALL)


def readme_prompts() -> list[str]:
    return [p.strip() for p in PROMPT_BLOCK_RE.findall(README.read_text(encoding="utf-8"))]
