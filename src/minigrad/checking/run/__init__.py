"""Running a check: its settings, its levels, the runner, fast mode, the report.

The settings (``settings.py``), what is evaluated at moved inputs
(``levels.py``), a foreign engine's nodes (``engines.py``), one check over its
orders (``runner.py``), one level compared entry by entry (``compare.py``),
an entry passed or failed (``decide.py``), fast mode and the direction over
all inputs (``fast.py``, ``direction.py``), the report and its table
(``report.py``, ``table.py``), the op whose rule is wrong and where
(``fault.py``, ``locate.py``).
"""
