"""Model adapters behind one interface (base.Model): anthropic, scripted, demo.

`registry.make_model(spec)` turns a `--model` string into a Model; nothing outside
models/anthropic.py imports the anthropic SDK.
"""
