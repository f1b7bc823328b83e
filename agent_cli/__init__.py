"""agent-cli: a terminal agent REPL with a lead and autonomous teammates on a shared task board."""

__version__ = "0.1.0"
