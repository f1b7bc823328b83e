"""What the Messages API says about tokens and models, for the Claude adapter: the
count-tokens endpoint (POST /v1/messages/count_tokens), one model's information (GET
/v1/models/{id}: its context window) and the models list (GET /v1/models, for /model).

Each is a short request with its own timeout and no SDK retries; failures come back as the
adapter's typed errors (anthropic.map_error), never as SDK exceptions.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from .. import errors

INFO_TIMEOUT_S = 10.0
LIST_LIMIT = 200  # models shown by /model (the API has a few dozen)


@dataclass(frozen=True)
class ModelListing:
    """One model the endpoint offers."""

    id: str
    display_name: str = ""
    context_window: int | None = None


def count_tokens(client: Any, params: dict[str, Any], cancel: threading.Event | None) -> int:
    """The input tokens of a Messages request (`params` as built for messages.create)."""
    from .anthropic import _open_stream

    body = {k: v for k, v in params.items() if k not in ("max_tokens", "stream")}
    quick = client.with_options(max_retries=0, timeout=INFO_TIMEOUT_S)
    result = _open_stream(lambda: quick.messages.count_tokens(**body), cancel)
    tokens = getattr(result, "input_tokens", None)
    if not isinstance(tokens, int) or tokens < 0:
        raise errors.ModelError(f"count_tokens answered no token count: {result!r:.200}")
    return tokens


def model_window(client: Any, name: str) -> int | None:
    """`max_input_tokens` from the endpoint's information on `name`; None when it has none
    (an older API, a local server) or the request fails."""
    try:
        info = client.with_options(max_retries=0, timeout=INFO_TIMEOUT_S).models.retrieve(name)
    except Exception:  # a server without the models API: the table or the default decides
        return None
    tokens = getattr(info, "max_input_tokens", None)
    return tokens if isinstance(tokens, int) and tokens > 0 else None


def list_models(client: Any) -> list[ModelListing]:
    """The models the endpoint offers (auto-paginated, at most LIST_LIMIT)."""
    from .anthropic import map_error

    out: list[ModelListing] = []
    try:
        for info in client.with_options(max_retries=0, timeout=INFO_TIMEOUT_S).models.list():
            window = getattr(info, "max_input_tokens", None)
            out.append(ModelListing(str(info.id), str(getattr(info, "display_name", "") or ""),
                                    window if isinstance(window, int) else None))
            if len(out) >= LIST_LIMIT:
                break
    except Exception as exc:
        raise map_error(exc) from exc
    return out
