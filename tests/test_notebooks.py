"""Every notebook in ``notebooks/`` runs top to bottom without an error, offline.

Each notebook starts its own loopback servers (``paperfetch.demo.DemoWorld`` or
``paperfetch.testing.LoopbackHost``) and checks its own results with ``assert``s,
so a behaviour change that breaks what a notebook shows fails here. They run in a
``python3`` kernel of *this* interpreter (see :func:`jupyter_path_with_this_python`),
in a temporary working folder. The notebooks are committed without outputs.
"""

from __future__ import annotations

from pathlib import Path

import ipykernel  # noqa: F401 - the kernel the notebooks run in; the test extra installs it
import nbclient
import nbclient.exceptions
import nbformat
import pytest

from tests._jupyter import write_python3_kernelspec

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
#: What a notebook may take, kernel start included; each is meant to take under ~30 s.
NOTEBOOK_BUDGET_S = 60

pytestmark = pytest.mark.slow




@pytest.fixture
def jupyter_path_with_this_python(tmp_path_factory, monkeypatch) -> Path:
    folder = write_python3_kernelspec(tmp_path_factory.mktemp("jupyter-data"))
    monkeypatch.setenv("JUPYTER_PATH", str(folder))
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # quiets debugpy's frozen-modules warning
    return folder


def test_there_are_notebooks():
    names = {path.name for path in NOTEBOOKS}
    assert {"quickstart.ipynb", "batch_from_dataframe.ipynb", "politeness.ipynb", "literature_search.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"{path.name} has outputs; clear them before committing (cell starting {cell.source[:60]!r})"
            )


@pytest.mark.timeout(NOTEBOOK_BUDGET_S + 30)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_without_error(path, tmp_path, jupyter_path_with_this_python):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=NOTEBOOK_BUDGET_S,         # per cell
        startup_timeout=60,
        resources={"metadata": {"path": str(tmp_path)}},  # the working folder: nothing lands in notebooks/
    )
    try:
        client.execute()  # each cell within the budget (nbclient's timeout); the whole within the test's
    except nbclient.exceptions.CellExecutionError as exc:
        pytest.fail(f"{path.name} failed:\n{exc}", pytrace=False)
    errors = [
        output for cell in nb.cells if cell.cell_type == "code"
        for output in cell.outputs if output.output_type == "error"
    ]
    assert not errors, errors
