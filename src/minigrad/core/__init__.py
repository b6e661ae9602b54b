"""The engine layer: nodes, the reverse pass, the rule table, forward mode.

Nothing here imports from :mod:`minigrad.checking`, :mod:`minigrad.compiler` or
:mod:`minigrad.teach`; those layers build on this one.
"""
