"""The Messages API's own web tools (web search, web fetch): which ones an agent is offered.

They run on Anthropic's side, inside one request, so nothing can ask a human between the call
and its result: a web tool is offered only when an allow rule enables it (`WebSearch`,
`WebFetch`, `WebFetch(domain:example.com)`, Claude Code's syntax), never when a deny or ask
rule names it, and only to Claude at Anthropic's own endpoint (a local server has no such
tools). A `WebFetch(domain:...)` deny rule becomes a blocked domain of both tools.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
WEB_FETCH = {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 5}
NAMES = frozenset({"web_search", "web_fetch"})


@dataclass(frozen=True)
class WebTools:
    """The definitions to send, and why a tool the rules mention is not offered."""

    definitions: list[dict[str, Any]] = field(default_factory=list)
    withheld: list[str] = field(default_factory=list)


def anthropic_endpoint(env: Mapping[str, str]) -> str | None:
    """None when requests go to Anthropic's API; else why web tools cannot be offered."""
    base = env.get("ANTHROPIC_BASE_URL", "").strip()
    if not base:
        return None
    host = (urlparse(base).hostname or "").lower()
    if host == "anthropic.com" or host.endswith(".anthropic.com"):
        return None
    return f"ANTHROPIC_BASE_URL points at {host or base}, which does not run the API's web tools"


def offered(rules: Iterable[Any], env: Mapping[str, str] | None = None) -> WebTools:
    """Web tools for `rules` (RuleEntry-like: .effect and .parsed with .family/.spec)."""
    web = [(r.effect, r.parsed.family, r.parsed.spec) for r in rules
           if r.parsed.family in ("WebSearch", "WebFetch")]
    if not web:
        return WebTools()
    reason = anthropic_endpoint(os.environ if env is None else env)
    if reason is not None:
        return WebTools(withheld=[f"web tools not offered: {reason}"])
    blocked = sorted({spec for effect, fam, spec in web
                      if effect == "deny" and fam == "WebFetch" and spec})
    out, withheld = [], []
    for family, base in (("WebSearch", WEB_SEARCH), ("WebFetch", WEB_FETCH)):
        mine = [(effect, spec) for effect, fam, spec in web if fam == family]
        if not any(effect == "allow" for effect, _ in mine):
            continue
        if any(effect in ("deny", "ask") and spec is None for effect, spec in mine):
            withheld.append(f"{family} not offered: a deny or ask rule names it (the API runs "
                            "it mid-request, where nothing can ask)")
            continue
        tool = dict(base)
        allowed = sorted({spec for effect, spec in mine if effect == "allow" and spec})
        if allowed and not any(effect == "allow" and spec is None for effect, spec in mine):
            tool["allowed_domains"] = [d for d in allowed if d not in blocked]
        elif blocked:
            tool["blocked_domains"] = blocked
        if tool.get("allowed_domains") == []:
            withheld.append(f"{family} not offered: every allowed domain is denied")
            continue
        out.append(tool)
    return WebTools(out, withheld)
