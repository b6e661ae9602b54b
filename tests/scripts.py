"""Loading a script of the repository (tools/, benchmarks/) as a module in tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_script(name: str, relative: str) -> ModuleType:
    """Import ``ROOT / relative`` as module ``name`` (kept in sys.modules, which
    dataclasses look their module up in while the file runs)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
