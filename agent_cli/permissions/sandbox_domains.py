"""The question at a sandboxed command's first request to a domain allowedDomains does not
name: `1` lets it through for this command, `2` also adds it to `sandbox.network.
allowedDomains` in settings.local.json, `3` refuses. Headless (no human): refused."""

from __future__ import annotations

from typing import Any

NETWORK_TOOL = "network"


def ask_domain(broker: Any, layers: Any, host: str, agent: str = "sandbox") -> str:
    """"once", "always" or "deny", from the human behind `broker` (a permissions
    ApprovalBroker; `layers` the SettingsLayers "always" writes to)."""
    from .broker import ApprovalRequest

    req = ApprovalRequest(
        agent=agent, tool=NETWORK_TOOL, input={"host": host},
        summary=f"network access to {host}",
        preview=f"a sandboxed command connects to {host} (not in sandbox.network.allowedDomains)",
        suggested_rule=f"network access to {host}",
    )
    answer = broker.ask(req)
    if not answer.allowed:
        return "deny"
    if answer.decision != "allow_always":
        return "once"
    save_domain(layers, host)
    return "always"


def save_domain(layers: Any, host: str) -> bool:
    """Add `host` to sandbox.network.allowedDomains in the local settings layer."""

    def mutate(data: dict[str, Any]) -> bool:
        box = data.setdefault("sandbox", {})
        net = box.setdefault("network", {}) if isinstance(box, dict) else None
        if not isinstance(net, dict):
            return False
        domains = net.setdefault("allowedDomains", [])
        if not isinstance(domains, list) or host in domains:
            return False
        domains.append(host)
        return True

    return bool(layers.update_local(mutate))
