"""The checking layer: numerical derivatives, their error bounds, verdicts, reports.

Built on :mod:`minigrad.core` alone; the compiler, the teaching layer and the
command line build on it.
"""
