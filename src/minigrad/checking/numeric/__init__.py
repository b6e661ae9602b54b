"""The numerical side: floats in, estimates out, no verdicts.

Steps and central differences (``steps.py``), Ridders' extrapolation, central
and one-sided (``ridders.py``), round-off read off the graph (``rounding.py``)
and off the grid the values lie on (``grain.py``), kinks and jumps
(``kinks.py``). Nothing here knows what *wrong* is.
"""
