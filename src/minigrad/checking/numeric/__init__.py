"""The numerical side: floats in, estimates with bounds out, no verdicts.

The one estimator (``estimate.py``: a pair of central differences, then a ladder of Richardson
tableaux with the locality rule, kinks, jumps and the edge of float64's range) and the round-off
read off the graph (``rounding.py``). Nothing here knows what *wrong* is.
"""
