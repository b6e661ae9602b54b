"""The verdicts: the one decision on an entry, and the one on a check (``decide.py``)."""
