"""The classroom layer: neural networks, toy data sets, the demo, pictures.

Built on the engine, the checker and the compiler; nothing below imports it,
so ``import minigrad`` does not load it.
"""
