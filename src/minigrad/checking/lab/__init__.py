"""Lab 03: a student's micrograd-style engine, checked through the public checkers.

The battery of checks (``battery.py``), one check of it run (``trials.py``),
the bug named from its results (``signature.py``), hypothesis for a
student's engine (``engine_strategies.py``).
"""
