"""Running a check: its settings, its levels, the runner, fast mode, the report.

The settings (``settings.py``), what is evaluated at moved inputs
(``levels.py``), how far a step may move each input (``turns.py``), a
foreign engine's nodes (``engines.py``), one check over its orders
(``runner.py``), one level compared entry by entry (``compare.py``),
fast mode (``fast.py``), the report and its table (``report.py``,
``table.py``), the op whose rule is wrong and where (``fault.py``,
``locate.py``): these two explain a failure and change no verdict.
"""
