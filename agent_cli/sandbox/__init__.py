"""The per-agent OS sandbox: every shell command and task verify inside its agent's boundary.

config (settings in Claude Code's names) -> boundary (what one agent may write, read,
reach) -> bwrap (the bubblewrap command line, Linux) or seatbelt (the sandbox-exec profile,
macOS) -> manager (the session's Sandbox: where a command runs, how it is wrapped) ->
explain (a boundary failure in one line). proxy + forwarder: allowedDomains over HTTP(S).
Below tools/ and permissions/; imports only base modules.
"""
