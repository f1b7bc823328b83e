"""What the wire stub says a request cost: its usage counts, and the prompt-cache model.

The request is read as the API reads it -- tools, then system blocks, then each message's
content blocks -- and every block carrying cache_control writes the prefix up to it into the
cache. A later request whose prefix, up to some block at or before its last breakpoint, was
written before reads it (see stub_server's docstring).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from agent_cli.models.reply import Reply, estimate_tokens, reply_tokens


class PromptCache:
    """The prefixes written so far (callers hold the stub's lock)."""

    def __init__(self) -> None:
        self._written: set[str] = set()

    def counts(self, body: dict[str, Any]) -> dict[str, int]:
        """The three input counts of `body` under the prompt-cache model."""
        digest = hashlib.sha256(str(body.get("model")).encode())
        prefixes, tokens, marks, total = [], [], [], 0
        for block, marked in cache_blocks(body):
            text = json.dumps(block, sort_keys=True)  # cache_control itself is not content
            digest.update(text.encode())
            prefixes.append(digest.copy().hexdigest())
            total += estimate_tokens(text)
            tokens.append(total)
            if marked:
                marks.append(len(prefixes) - 1)
        if not marks:
            return {"input_tokens": total, "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0}
        last = marks[-1]
        hit = max((i for i in range(last + 1) if prefixes[i] in self._written), default=-1)
        self._written.update(prefixes[i] for i in marks)
        read = tokens[hit] if hit >= 0 else 0
        return {
            "input_tokens": total - tokens[last],
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": tokens[last] - read,
        }


def request_tokens(body: dict) -> int:
    """A request's input tokens, estimated as every offline model does."""
    return estimate_tokens(json.dumps(body))


def cache_blocks(body: dict) -> list[tuple[Any, bool]]:
    """(block, carries cache_control) in the order the API caches: tools, system, messages."""
    def bare(block: Any) -> tuple[Any, bool]:
        if not isinstance(block, dict):
            return block, False
        return {k: v for k, v in block.items() if k != "cache_control"}, "cache_control" in block

    out = [bare(t) for t in body.get("tools") or []]
    system = body.get("system")
    out += [bare(b) for b in ([system] if isinstance(system, str) else system or [])]
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks or []:
            inner, marked = bare(block)
            out.append(({"role": message.get("role"), "block": inner}, marked))
    return out


def reply_usage(body: dict, reply: Reply) -> dict[str, int]:
    """The usage a reply to `body` reports (its `usage` replaces the counts it names)."""
    thinks = (body.get("thinking") or {}).get("type") in ("enabled", "adaptive")
    thought = estimate_tokens(reply.thinking) if thinks else 0  # billed as output, as the API does
    usage = {
        "input_tokens": request_tokens(body),
        "output_tokens": reply_tokens(reply.text, len(reply.tool_calls)) + thought,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    usage.update(reply.given_usage())
    return usage
