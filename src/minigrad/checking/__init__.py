"""The checking layer: numerical derivatives, their error bounds, verdicts, reports.

Built on :mod:`minigrad.core` alone; the compiler, the teaching layer and the
command line build on it. Its rooms, bottom first (``tools/layers.py`` keeps
the order): ``numeric/`` < ``verdicts/`` < ``run/`` < the public face
(``gradcheck.py``, ``strategies.py``, ``plugin.py``) < ``lab/``.
"""
