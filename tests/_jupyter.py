"""A ``python3`` kernelspec that runs this interpreter, for every test that starts a Jupyter kernel."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def write_python3_kernelspec(folder: Path) -> Path:
    """A ``kernels/python3`` spec under *folder* that starts ipykernel with this interpreter.

    Put *folder* first on ``JUPYTER_PATH`` and every Jupyter tool (nbclient, Voilà) that asks
    for the ``python3`` kernel gets this environment's Python, whatever other ``python3``
    kernelspecs the machine or the user has.
    """
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (paperfetch tests)",
        "language": "python",
        "metadata": {"debugger": False},
    }))
    return folder
