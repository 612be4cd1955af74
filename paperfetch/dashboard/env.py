"""Whether this is a Jupyter kernel and whether ipywidgets imports; nothing here imports either."""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["in_notebook", "widgets_available"]


def in_notebook() -> bool:
    """Whether this runs inside a Jupyter kernel (not a terminal IPython, not plain Python)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:  # not imported: not in IPython
        return False
    try:
        shell = ipython.get_ipython()
        return shell is not None and (type(shell).__name__ == "ZMQInteractiveShell" or "IPKernelApp" in shell.config)
    except Exception:  # noqa: BLE001
        return False


def widgets_available() -> bool:
    try:
        return importlib.util.find_spec("ipywidgets") is not None
    except (ImportError, ValueError):
        return False
