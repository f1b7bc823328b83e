"""Subcommands of the command line that script the shared state from another terminal."""
