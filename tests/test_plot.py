"""The summary plot (``r.plot()``, ``paperfetch.report.plot``): three panels, headless, in the saved
dashboard as an image, and a clear ImportError without matplotlib (docs/outcomes.md, "The summary plot")."""

from __future__ import annotations

import logging
import socket
import sys
from pathlib import Path

import pandas as pd
import pytest

from paperfetch import Retriever, report
from paperfetch.http.hosts import host_key
from paperfetch.outcomes import outcomes_frame
from paperfetch.plot import MISSING_MATPLOTLIB, RunSummary, figure_png
from tests._job_world import JobWorld
from tests._quick import unpaced

pytest.importorskip("matplotlib")

OUTCOMES = outcomes_frame([
    {"input": "10.1/a", "status": "downloaded", "source": "openalex"},
    {"input": "10.1/b", "status": "downloaded", "source": "unpaywall"},
    {"input": "10.1/c", "status": "not_found"},
    {"input": "10.1/d", "status": "no_open_copy", "source": "unpaywall"},
    {"input": "x", "status": "invalid_identifier"},
])
REQUESTS = pd.DataFrame({"host": ["pub.example", "api.example", "pub.example"], "elapsed_s": [0.5, 0.1, 0.25],
                         "waited_s": [1.0, None, 0.5]})


def _bars(ax) -> dict[str, float]:
    """Each bar's label and its total width (stacked bars add up)."""
    labels = [t.get_text() for t in ax.get_yticklabels()]
    widths: dict[str, float] = {}
    for patch in ax.patches:
        label = labels[round(patch.get_y() + patch.get_height() / 2)]
        widths[label] = widths.get(label, 0.0) + patch.get_width()
    return widths


def test_the_plot_is_a_figure_of_three_panels_drawn_headless():
    from matplotlib.figure import Figure

    fig = report.plot(OUTCOMES, REQUESTS)
    assert isinstance(fig, Figure)
    status_ax, source_ax, time_ax = fig.axes[:3]
    assert [ax.get_title() for ax in fig.axes[:3]] == ["outcomes by status", "outcomes by source", "time per host"]
    assert _bars(status_ax) == {"downloaded": 2, "no_open_copy": 1, "not_found": 1, "invalid_identifier": 1}
    assert _bars(source_ax) == {"unpaywall": 2, "openalex": 1, "(none)": 2}
    assert _bars(time_ax) == pytest.approx({"pub.example": 2.25, "api.example": 0.1})
    assert figure_png(fig).startswith(b"\x89PNG")  # no display, no pyplot: matplotlib's Agg renderer
    assert fig._repr_png_().startswith(b"\x89PNG")  # a notebook shows it without pyplot's inline backend


def test_without_a_request_log_the_time_panel_is_left_out():
    fig = report.plot(OUTCOMES)
    assert [ax.get_title() for ax in fig.axes] == ["outcomes by status", "outcomes by source"]
    assert all(ax.patches for ax in fig.axes)  # no axis without data


def _unpaced_but_crossref(endpoints: dict[str, str]) -> dict[str, float]:
    """No service's own interval (bioRxiv's 1 s, Semantic Scholar's 1 s between retries), but Crossref's: its
    pools, whose labels the plot and the warnings must show, take their intervals from it."""
    return {host: 0.0 for host in unpaced(endpoints) if host != host_key(endpoints["crossref"])}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_offline_run_draws_no_axis_without_data(tmp_path, caplog):
    """Every service refuses the connection: no row has a source, and no request left the machine."""
    caplog.set_level(logging.WARNING, logger="paperfetch")
    names = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi_idconv", "ncbi_eutils", "arxiv", "doi",
             "semanticscholar", "biorxiv")
    endpoints = {n: f"http://127.0.0.1:{_closed_port()}" for n in names}
    with Retriever(email="you@uni.example", out_dir=tmp_path, endpoints=endpoints,
                   state="memory", cache=False, verbosity=0, delay_min_s=0.0, delay_max_s=0.0, dashboard=False,
                   progress=False, http_options={"network_retry_base_s": 0.05,
                                                 "host_intervals": _unpaced_but_crossref(endpoints)}) as r:
        out = r.download(["10.5555/a.b", "10.5555/c.d"])
        fig = r.plot()
    assert set(out["status"].astype(str)) == {"network_error"}
    assert "breaker open" in caplog.text and "#polite-" not in caplog.text  # the Crossref pool's warning: its label
    assert fig.axes and all(ax.patches for ax in fig.axes), [ax.get_title() for ax in fig.axes]


def test_the_demo_batch_plot_is_small_and_names_no_pool(tmp_path):
    from paperfetch.demo import DEMO_INPUTS, DemoWorld

    with DemoWorld() as world, Retriever(email="demo@uni.example", out_dir=tmp_path, endpoints=world.endpoints,
                                         verbosity=0, cache=False, state="memory", dashboard=False, progress=False,
                                         http_options={"network_retry_base_s": 0.1, "rate_limit_min_s": 0.1,
                                                       "rate_limit_max_s": 0.3,
                                                       "host_intervals": _unpaced_but_crossref(world.endpoints)}) as r:
        r.download(DEMO_INPUTS)
        fig = r.plot()
    png = figure_png(fig)
    assert len(png) < 25_000, len(png)  # what a notebook keeps of every run (a 64-colour palette, 80 dpi)
    assert fig.get_size_inches()[0] == pytest.approx(11.0)  # about a 1024 px window's output at 80 dpi
    labels = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    assert labels and not [label for label in labels if "#" in label], labels


def test_a_run_that_downloaded_nothing_or_that_the_user_did_not_start_leaves_no_image():
    assert RunSummary(OUTCOMES).image_html().startswith('<div class="paperfetch-summary-plot"><img ')
    nothing = outcomes_frame([{"input": "10.1/a", "status": "already_downloaded", "source": "openalex"},
                              {"input": "10.1/c", "status": "not_found"}])
    assert RunSummary(nothing).image_html() == ""
    assert RunSummary(OUTCOMES, asked=False).image_html() == ""  # fulltext's batch, say
    assert _bars(RunSummary(nothing).figure().axes[0]) == {"already_downloaded": 1, "not_found": 1}  # r.plot() still draws


def test_without_matplotlib_the_error_names_the_extra(monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'paperfetch-oa\[plot\]'") as caught:
        report.plot(OUTCOMES)
    assert str(caught.value) == MISSING_MATPLOTLIB
    assert RunSummary(OUTCOMES).image_html() == ""  # the saved dashboard: no image, no error
    RunSummary(OUTCOMES).show()  # and nothing displayed


def test_the_extra_is_declared():
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert 'plot = ["matplotlib>=' in text
    test_extra = text.split("\ntest = [", 1)[1].split("\n]", 1)[0]
    assert '"matplotlib>=' in test_extra


@pytest.fixture(scope="module")
def world():
    with JobWorld(n=3, crawl_delay=0.05, base_ip=222) as w:
        yield w


def test_r_plot_draws_the_last_batch_with_its_requests_and_the_saved_dashboard_shows_it(world, tmp_path):
    r = Retriever(email="you@uni.example", out_dir=tmp_path, endpoints=world.endpoints, sources=("openalex",),
                  state="memory", verbosity=0, delay_min_s=0.0, delay_max_s=0.0, cache=False, dashboard=False)
    with pytest.raises(ValueError, match="no batch has ended"):
        r.plot()
    out = r.download(world.dois)
    fig = r.plot()
    assert _bars(fig.axes[0]) == {"downloaded": 3}
    assert _bars(fig.axes[1]) == {"openalex": 3}
    assert set(_bars(fig.axes[2])) == {host_key(world.openalex.base_url), host_key(world.publisher.base_url)}
    assert _bars(r.plot(out).axes[0]) == {"downloaded": 3}
    r.close()


def test_in_a_notebook_the_saved_download_shows_the_plot_below_its_dashboard(world, tmp_path, monkeypatch):
    pytest.importorskip("ipywidgets")
    import IPython.display

    from paperfetch import dashboard as widgets
    from paperfetch.dashboard import env

    class Handle:
        def __init__(self):
            self.updates = []

        def update(self, obj, raw=False):
            self.updates.append(obj)

    shown = []

    def fake_display(obj, display_id=None, raw=False):
        shown.append((obj if raw else obj._repr_mimebundle_(), Handle()))
        return shown[-1][1]

    monkeypatch.setattr(IPython.display, "display", fake_display)
    monkeypatch.setattr(env, "in_notebook", lambda: True)
    monkeypatch.setattr(widgets, "in_notebook", lambda: True)
    r = Retriever(email="you@uni.example", out_dir=tmp_path, endpoints=world.endpoints, sources=("openalex",),
                  state="memory", verbosity=0, delay_min_s=0.0, delay_max_s=0.0, cache=False)
    r.download(world.dois)
    first = list(shown)
    r.download(world.dois)  # again: every PDF is already there, nothing downloaded
    r.fulltext(world.dois)  # a batch run on the user's behalf
    r.close()
    plots = [output for output, _ in shown if "paperfetch-summary-plot" in str(output.get("text/html", ""))]
    assert len(shown) > len(first) + 1 and len(plots) == 1  # two more dashboards, no second plot
    (dashboard, handle), (plot_output, _) = first
    final = handle.updates[-1]["text/html"]
    assert "paperfetch-dashboard" in final and "<img" not in final  # the frozen dashboard keeps its size
    assert plot_output["text/plain"] == "paperfetch: 3 of 3 input(s) downloaded (summary plot: r.plot())"
    assert plot_output["text/html"].startswith('<div class="paperfetch-summary-plot"><img alt="paperfetch: 3 of 3 '
                                               'input(s) downloaded" src="data:image/png;base64,')
    assert plot_output["text/html"].endswith('style="width:100%;height:auto"></div>')  # the output's width
    assert "paperfetch-dashboard" not in plot_output["text/html"]


def test_the_saved_job_dashboard_shows_the_plot(world, tmp_path):
    pytest.importorskip("ipywidgets")
    r = Retriever(email="you@uni.example", out_dir=tmp_path, endpoints=world.endpoints, sources=("openalex",),
                  state="memory", verbosity=0, delay_min_s=0.0, delay_max_s=0.0, cache=False, dashboard=False)
    job = r.start(world.dois)
    view = job.dashboard_view
    job.result(timeout=30)
    assert view.closed
    assert '<img alt="paperfetch: 3 of 3 input(s) downloaded" src="data:image/png;base64,' in view.static_bundle()["text/html"]
    r.close()
