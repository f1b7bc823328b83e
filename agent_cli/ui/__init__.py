"""The terminal user interface: the prompt_toolkit REPL, rich rendering, approvals, slash
commands, and the headless (-p) runner.

Nothing in the core imports this package; it only subscribes to the runtime's events and
services the approval broker.
"""
