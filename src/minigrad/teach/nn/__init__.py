"""Neural networks on scalar Values: neurons, layers, multi-layer perceptrons, SGD.

The same building blocks as micrograd's ``nn`` module (``Module``, ``Neuron``,
``Layer``, ``MLP``), typed and validated, with a choice of nonlinearity and
with every random number drawn from a ``random.Random`` the caller can seed,
never from the global generator, so a model is reproducible from its seed.
An MLP saves its parameters to a JSON file and loads them back
(:meth:`MLP.save`, :meth:`MLP.load`), and pickles.

Example:
    >>> import random
    >>> from minigrad.teach.nn import MLP, SGD
    >>> model = MLP(2, [4, 1], rng=random.Random(0))
    >>> opt = SGD(model.parameters(), lr=0.1)
    >>> loss = (model([1.0, -2.0]) - 1.0) ** 2
    >>> before = loss.data
    >>> opt.zero_grad()
    >>> loss.backward()
    >>> opt.step()
    >>> after = ((model([1.0, -2.0]) - 1.0) ** 2).data
    >>> after < before
    True
"""

from minigrad.teach.nn.mlp import MLP
from minigrad.teach.nn.modules import NONLINEARITIES, Layer, Module, Neuron
from minigrad.teach.nn.optim import SGD

__all__ = ["MLP", "NONLINEARITIES", "SGD", "Layer", "Module", "Neuron"]
