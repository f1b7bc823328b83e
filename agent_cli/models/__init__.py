"""Model adapters behind one interface (base.Model): anthropic, scripted, demo.

`registry.make_model(spec)` turns a `--model` string into a Model; nothing outside
models/anthropic.py imports the anthropic SDK. The offline models (scripted, demo) answer
with one reply type and stream it one way (reply.py).
"""
