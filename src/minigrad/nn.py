"""micrograd's building blocks: the public name of :mod:`minigrad.teach.nn`.

Example:
    >>> from minigrad.nn import MLP
    >>> len(MLP(2, [4, 1]).parameters())
    17
"""

from minigrad.teach.nn import MLP, NONLINEARITIES, SGD, Layer, Module, Neuron

__all__ = ["MLP", "NONLINEARITIES", "SGD", "Layer", "Module", "Neuron"]
