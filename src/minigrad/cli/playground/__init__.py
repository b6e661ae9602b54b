"""``minigrad playground``: a page that runs minigrad in the browser, through Pyodide.

:mod:`~minigrad.cli.playground.server` serves the page (``static/``) and
minigrad's own package on the loopback address and nothing else;
:mod:`~minigrad.cli.playground.session` is what the page runs inside Pyodide,
in a Web Worker of its own for each run: the code in its editor, with its
printed output, warnings, pictures and reports. User code runs only in the
browser, never in the server's process.
"""

#: How many seconds one run may take before the page stops it (``--time-limit``;
#: the page shows it and a teacher can change it there).
TIME_LIMIT = 30
