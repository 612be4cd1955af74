"""The per-source yield (``offered_by``, ``yield_by_source``, the CLI's line), the credits
left today in the dashboard and the CLI tables, the two small tables their sources keep, and the one
``X-RateLimit-*`` parser."""

from __future__ import annotations

import pandas as pd
import pytest

from paperfetch import FakeClock, HttpClient, Retriever
from paperfetch.cli import main
from paperfetch.config import Identification
from paperfetch.dashboard import DashboardModel
from paperfetch.dashboard.render import HOST_COLUMNS, render_html, render_text
from paperfetch.dashboard.tables import host_table_text, style_domain_status
from paperfetch.demo import DEMO_INPUTS, DemoWorld
from paperfetch.http.hosts import host_key
from paperfetch.outcomes import COLUMNS, outcomes_frame
from paperfetch.report import YIELD_COLUMNS, yield_by_source, yield_line
from paperfetch.sources.crossref import CrossrefSource
from paperfetch.sources.openalex import OpenAlexSource
from paperfetch.testing import Reply, scripted_session

FAST = {"network_retry_base_s": 0.05, "rate_limit_min_s": 0.05, "rate_limit_max_s": 0.1}
NOW = 1_780_000_000.0


@pytest.fixture(scope="module")
def world():
    with DemoWorld(base_ip=120) as w:
        yield w


@pytest.fixture(scope="module")
def demo_outcomes(world, tmp_path_factory):
    with Retriever(email="tester@uni.example", out_dir=tmp_path_factory.mktemp("pdfs"), endpoints=world.endpoints,
                   progress=False, verbosity=0, http_options=FAST) as r:
        return r.download(DEMO_INPUTS)


# ---------------------------------------------------------------------- the yield per source
def test_offered_by_is_a_fixed_column_naming_the_sources_that_offered_a_copy(demo_outcomes):
    assert "offered_by" in COLUMNS and list(demo_outcomes.columns) == list(COLUMNS)
    offered = dict(zip(demo_outcomes["input"].astype(object), demo_outcomes["offered_by"].astype(object)))
    assert offered["10.5555/demo.fast"] == "openalex" and offered["10.5555/demo.slow1"] == "unpaywall"
    assert offered["10.5555/demo.robots"] == "openalex,landing"  # both offered; robots.txt refused both
    assert offered["10.5555/demo.s2only"] == "semanticscholar" and offered["arXiv:2101.00001v2"] == "arxiv"
    assert pd.isna(offered["10.5555/demo.closed"]) and pd.isna(offered["not an identifier"])


def test_yield_on_the_demo_world_has_exact_figures(demo_outcomes):
    table = yield_by_source(demo_outcomes)
    expected = pd.DataFrame([
        ("openalex", 9, 4, 8),          # 10.5555/demo.fast asked twice counts once
        ("unpaywall", 5, 4, 5),         # demo.forbidden's copy was offered, its host answered 403
        ("biorxiv", 2, 2, 2),
        ("landing", 2, 1, 1),           # demo.robots: offered by OpenAlex too, so not "only here"
        ("arxiv", 1, 1, 1),
        ("pmc", 1, 1, 1),               # the PMC paper, from the PMC bucket ahead of Europe PMC
        ("semanticscholar", 1, 1, 1),   # the paper only Semantic Scholar knows
    ], columns=YIELD_COLUMNS)
    pd.testing.assert_frame_equal(table, expected)
    assert yield_line(table).startswith("yield: openalex 4 of 9 (8 only here), unpaywall 4 of 5 (5 only here), ")


def test_yield_counts_papers_once_overlaps_and_resumed_copies():
    frame = outcomes_frame([
        {"input": "10.1/a", "id_type": "doi", "doi": "10.1/a", "status": "downloaded", "source": "openalex",
         "offered_by": "openalex,unpaywall"},
        {"input": "10.1/A", "id_type": "doi", "doi": "10.1/a", "status": "downloaded", "source": "openalex",
         "offered_by": "openalex,unpaywall"},  # the same paper again
        {"input": "10.1/b", "id_type": "doi", "doi": "10.1/b", "status": "http_error", "source": "unpaywall",
         "offered_by": "unpaywall"},  # offered, not downloaded: only Unpaywall had it
        {"input": "10.1/c", "id_type": "doi", "doi": "10.1/c", "status": "already_downloaded", "source": "crossref"},
        {"input": "10.1/d", "id_type": "doi", "doi": "10.1/d", "status": "no_open_copy"},
        {"input": "junk", "status": "invalid_identifier"},
    ])
    table = yield_by_source(frame).set_index("source")
    assert table.loc["openalex"].tolist() == [1, 1, 0]
    assert table.loc["unpaywall"].tolist() == [2, 0, 1]
    assert table.loc["crossref"].tolist() == [1, 1, 1]  # resumed from the ledger: its copy was offered then
    assert yield_line(yield_by_source(frame)) == "yield: crossref 1 of 1 (1 only here), openalex 1 of 1, unpaywall 0 of 2 (1 only here)"
    assert yield_line(yield_by_source(outcomes_frame([]))) == "" and list(yield_by_source(outcomes_frame([]))) == YIELD_COLUMNS


def test_cli_download_summary_has_a_yield_line(world, tmp_path, monkeypatch, capsys):
    for name, url in world.endpoints.items():
        monkeypatch.setenv(f"PAPERFETCH_{name.upper()}_URL", url)
    code = main(["download", "10.5555/demo.fast", "10.5555/demo.slow1", "10.5555/demo.unknown", "--email", "cli@uni.example",
                 "--out", str(tmp_path / "pdfs"), "--no-progress", "--delay-min", "0.01"])
    assert code == 1  # demo.unknown is not found
    out = capsys.readouterr().out
    assert "yield: openalex 1 of 1 (1 only here), unpaywall 1 of 1 (1 only here)" in out.splitlines()


# ---------------------------------------------------------------------- credits left today
def _openalex_client(remaining: str = "993") -> HttpClient:
    headers = {"Content-Type": "application/json", "X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": remaining,
               "X-RateLimit-Credits-Used": "1", "X-RateLimit-Reset": "3600"}
    session, _ = scripted_session({"https://api.openalex.org/works/doi:10.1/a": Reply(200, b"{}", headers),
                                   "https://pub.example/a.pdf": Reply(200, b"%PDF-1.4", {"Content-Type": "application/pdf"})})
    return HttpClient(session=session, clock=FakeClock(start_wall=NOW), verbosity=0)


def test_the_cli_host_table_shows_credits_left_only_when_a_host_counts_them():
    with _openalex_client("12345") as client:
        client.get("https://pub.example/a.pdf")
        assert "credits left" not in host_table_text(client.domain_status())
        client.get("https://api.openalex.org/works/doi:10.1/a")
        text = host_table_text(client.domain_status())
    header, *lines = text.splitlines()
    assert "credits left" in header
    assert "12,345" in next(line for line in lines if "api.openalex.org" in line)
    assert "12,345" not in next(line for line in lines if "pub.example" in line)


def test_the_notebook_styler_names_the_credits_left_today_and_drops_the_column_when_none_is_known():
    with _openalex_client() as client:
        client.get("https://pub.example/a.pdf")
        assert "credits left today" not in style_domain_status(client.domain_status()).to_html()
        client.get("https://api.openalex.org/works/doi:10.1/a")
        assert "credits left today" in style_domain_status(client.domain_status()).to_html()


def test_the_dashboard_host_table_has_a_credits_column():
    with _openalex_client() as client:
        model = DashboardModel(clock=client.clock).watch(client)
        model.start(1)
        client.get("https://api.openalex.org/works/doi:10.1/a")
        client.get("https://pub.example/a.pdf")
        snapshot = model.snapshot()
    assert [c.header for c in HOST_COLUMNS][-1] == "credits"
    assert not HOST_COLUMNS[-1].wide  # shown at 700 px too, beside the columns that are never left out
    oa = snapshot.host(host_key("https://api.openalex.org"))
    assert oa is not None and oa.credits_left == 993 and snapshot.host(host_key("https://pub.example")).credits_left is None
    assert snapshot.hosts_frame().set_index("host").loc[oa.host, "credits_left"] == 993
    html = render_html(snapshot)
    row = html.split(f'<tr data-host="{oa.host}"')[1].split("</tr>")[0]
    assert row.rstrip().endswith("<td>993</td>")  # the last column
    assert ">credits</th>" in html and "credits left today" in html  # the header's tooltip
    assert "993" in next(line for line in render_text(snapshot).splitlines() if "api.openalex.org" in line)


def test_a_saved_20_host_dashboard_with_credits_stays_under_15_kb():
    headers = {"Content-Type": "application/pdf", "X-RateLimit-Limit": "100000", "X-RateLimit-Remaining": "99999"}
    session, _ = scripted_session({f"https://publisher-{n:02d}.example.org/x.pdf": Reply(200, b"%PDF-1.4", headers)
                                   for n in range(20)})
    with HttpClient(session=session, clock=FakeClock(start_wall=NOW), verbosity=0) as client:
        model = DashboardModel(clock=client.clock).watch(client)
        model.start(20)
        for n in range(20):
            for _ in range(5):
                client.get(f"https://publisher-{n:02d}.example.org/x.pdf")
            model.item_finished("downloaded", url=f"https://publisher-{n:02d}.example.org/x.pdf")
        model.finish()
        html = render_html(model.snapshot())
    assert html.count("99,999") == 20
    assert len(html.encode()) < 15_000, len(html.encode())


# ---------------------------------------------------------------------- the tables moved into the sources
def test_crossref_declares_its_pools_concurrency():
    assert CrossrefSource.concurrency_for(Identification(email="me@uni.edu")) == 3
    assert CrossrefSource.concurrency_for(Identification()) == 1


def test_the_retriever_caps_crossref_by_the_sources_pool(tmp_path):
    for email, cap in (("me@uni.edu", 3), (None, 1)):
        with Retriever(email=email, out_dir=tmp_path, progress=False, verbosity=0,
                       sources=["crossref"]) as r:
            key = host_key(CrossrefSource.default_base_url)
            assert r.api.host_concurrency[key] == cap


def test_openalex_names_the_remedy_for_a_spent_budget():
    assert "PAPERFETCH_OPENALEX_API_KEY" in OpenAlexSource.budget_remedy(Identification())
    assert OpenAlexSource.budget_remedy(Identification(openalex_api_key="k" * 20)) == "the key's budget renews then"
