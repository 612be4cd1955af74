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
    _people_read_no_internal_names(nb)
    if path.name == "full_text.ipynb":
        _markdown_reads_as_a_document(nb)
    if path.name == "quickstart.ipynb":
        _settings_show_pools_by_their_labels(nb)


def _outputs(nb) -> list[tuple[str, str]]:
    """Every (mime type, text) a saved notebook shows: streams, text, HTML and Markdown."""
    shown = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                shown.append(("stream", output.text))
            for mime, data in output.get("data", {}).items():
                if mime.startswith("text/"):
                    shown.append((mime, data if isinstance(data, str) else "".join(data)))
    return shown


def _people_read_no_internal_names(nb) -> None:
    """No pool's key (``127.0.0.1:8080#polite-single``) in anything a notebook shows: pools by their labels."""
    leaked = [text[max(0, text.find("#p") - 40):text.find("#p") + 40] for _, text in _outputs(nb)
              if "#polite-" in text or "#public-" in text]
    assert not leaked, leaked


def _settings_show_pools_by_their_labels(nb) -> None:
    """``r.settings`` in a notebook: Crossref's pools by the labels they declare, values in ``<code>`` (a
    regex's ``$`` is no maths for MathJax)."""
    import re

    (html,) = [text for mime, text in _outputs(nb) if mime == "text/html" and "hosts." in text and "origin" in text]
    assert "(list queries)</td>" in html and "(single lookups)</td>" in html, html[:2000]
    assert "tex2jax_ignore" in html and "$" not in re.sub(r"<code>.*?</code>", "", html, flags=re.S)


def _markdown_reads_as_a_document(nb) -> None:
    """The Markdown twin shown with ``Markdown()``, rendered by the CommonMark renderer nbconvert uses (JupyterLab's
    follows the same setext rule): its front matter is fields in a paragraph under a rule, not a heading; its
    title is the one top heading; each citation is its printed label once, linked; the plain variant printed
    has no anchor and no link."""
    import re

    import mistune

    (document,) = [text for mime, text in _outputs(nb) if mime == "text/markdown"]
    html = mistune.html(document)
    headings = re.findall(r"<h([12])>(.*?)</h\1>", html, flags=re.S)
    assert headings and headings[0] == ("1", "A clip-on sensor for the water content of plant stems"), headings[:3]
    assert not [text for _, text in headings if re.search(r"\b(doi|license|sha256|input):", text)], headings
    assert re.search(r"<p>title: .*?\ndoi: .*?</p>", html, flags=re.S)  # the fields stay a block of their own
    assert 'the plant is <a href="#CR1">1</a>.' in html and "[^" not in document and "[1[" not in document
    (plain,) = [text for mime, text in _outputs(nb) if mime == "stream" and text.startswith("Water moves")]
    assert "the plant is 1." in plain and "<a id=" not in plain and "](#" not in plain
