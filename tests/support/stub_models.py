"""The wire stub's Models API (GET /v1/models and GET /v1/models/{id}) and its count-tokens
answer, kept apart from stub_server.py's Messages API.

A listed model is a dict with the ModelInfo fields the SDK parses (`entry` fills them in);
`max_input_tokens` is the context window agent-cli reads.
"""

from __future__ import annotations

from typing import Any

STUB_WINDOW = 200_000


def entry(model_id: str, window: int | None = STUB_WINDOW, name: str = "") -> dict[str, Any]:
    """One model as the API describes it."""
    info: dict[str, Any] = {
        "type": "model",
        "id": model_id,
        "display_name": name or model_id.replace("-", " ").title(),
        "created_at": "2026-01-01T00:00:00Z",
        "lifecycle": "active",
    }
    if window is not None:
        info["max_input_tokens"] = window
        info["max_tokens"] = 64_000
    return info


def answer(models: list[dict[str, Any]], path: str) -> tuple[int, dict[str, Any]]:
    """(status, body) for a GET under /v1/models."""
    if path == "/v1/models":
        return 200, {
            "data": models,
            "has_more": False,
            "first_id": models[0]["id"] if models else None,
            "last_id": models[-1]["id"] if models else None,
        }
    wanted = path.removeprefix("/v1/models/")
    for info in models:
        if info["id"] == wanted:
            return 200, info
    return 404, {"type": "error",
                 "error": {"type": "not_found_error", "message": f"model: {wanted}"}}
