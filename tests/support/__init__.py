"""Test helpers shared across the test folders (not collected: no file here is test_*.py).

Imported as `support.<module>`: pyproject's pytest `pythonpath` puts tests/ on sys.path.
"""
