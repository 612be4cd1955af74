"""End to end: the Retriever against the offline demo world (real HTTP servers on loopback)."""

from __future__ import annotations

import threading
from pathlib import Path

import pandas as pd
import pytest

from paperfetch import Retriever, defaults
from paperfetch.cli import main
from paperfetch.demo import DEMO_INPUTS, DemoWorld
from paperfetch.http.hosts import host_key
from paperfetch.outcomes import COLUMNS, Status
from tests._quick import retriever, slow_services, unpaced

#: The demo world's 429s and resets retried as a user's run retries them.
RETRYING = {"max_retries": defaults.MAX_RETRIES}

GOLDEN = pd.DataFrame(
    [
        ("10.5555/demo.fast", "doi", "downloaded", "openalex", "10.5555/demo.fast"),
        ("https://doi.org/10.5555/DEMO.FAST", "doi", "downloaded", "openalex", "10.5555/demo.fast"),
        ("doi:10.5555/demo.fast2", "doi", "downloaded", "openalex", "10.5555/demo.fast2"),
        ("10.5555/demo.slow1", "doi", "downloaded", "unpaywall", "10.5555/demo.slow1"),
        ("10.5555/demo.slow2", "doi", "downloaded", "unpaywall", "10.5555/demo.slow2"),
        ("10.5555/demo.slow3", "doi", "downloaded", "unpaywall", "10.5555/demo.slow3"),
        ("10.5555/demo.limited", "doi", "downloaded", "openalex", "10.5555/demo.limited"),
        ("10.5555/demo.limited2", "doi", "downloaded", "openalex", "10.5555/demo.limited2"),
        ("10.5555/demo.forbidden", "doi", "host_suppressed", "unpaywall", "10.5555/demo.forbidden"),
        ("10.5555/demo.html", "doi", "downloaded", "unpaywall", "10.5555/demo.html"),
        ("10.5555/demo.challenge", "doi", "invalid_pdf", "openalex", "10.5555/demo.challenge"),
        ("10.5555/demo.robots", "doi", "disallowed_by_robots", "openalex", "10.5555/demo.robots"),
        ("10.5555/demo.held", "doi", "host_held", "openalex", "10.5555/demo.held"),
        ("10.5555/demo.landing", "doi", "downloaded", "landing", "10.5555/demo.landing"),
        ("10.5555/demo.gone", "doi", "http_error", "openalex", "10.5555/demo.gone"),
        ("10.5555/demo.gone.retraction", "doi", "no_open_copy", None, "10.5555/demo.gone.retraction"),
        ("10.5555/demo.down", "doi", "network_error", "openalex", "10.5555/demo.down"),
        ("10.5555/demo.closed", "doi", "no_open_copy", None, "10.5555/demo.closed"),
        ("10.5555/demo.unknown", "doi", "not_found", None, "10.5555/demo.unknown"),
        ("PMID:90000001", "pmid", "downloaded", "pmc", "10.5555/demo.pmc"),
        ("arXiv:2101.00001v2", "arxiv", "downloaded", "arxiv", "10.48550/arxiv.2101.00001"),
        ("10.5555/demo.s2only", "doi", "downloaded", "semanticscholar", "10.5555/demo.s2only"),
        ("10.1101/2026.01.05.000001", "doi", "downloaded", "biorxiv", "10.1101/2026.01.05.000001"),
        ("10.64898/2026.02.02.000002", "doi", "downloaded", "biorxiv", "10.64898/2026.02.02.000002"),
        ("not an identifier", None, "invalid_identifier", None, None),
        (None, None, "invalid_identifier", None, None),
    ],
    columns=["input", "id_type", "status", "source", "doi"],
)


@pytest.fixture(scope="module")
def world():
    with DemoWorld(base_ip=60) as w:
        yield w


def test_mixed_batch_matches_the_golden_outcomes_and_resumes(world, tmp_path):
    # bioRxiv's 1 s and arXiv's 3 s left out; the other services keep theirs (a paper's sources race with them)
    unpaced_world = {"host_intervals": unpaced(slow_services(world.endpoints))}
    with retriever(tmp_path, world.endpoints, **RETRYING, http_options=unpaced_world) as r:
        first = r.download(DEMO_INPUTS)
        requests_first = r.requests()
    assert list(first.columns) == list(COLUMNS)
    assert first["status"].dtype == "category"
    assert set(first["status"].cat.categories) == {s.value for s in Status}
    got = first[["input", "id_type", "status", "source", "doi"]].astype(object).where(first[["input", "id_type", "status", "source", "doi"]].notna(), None)
    expected = GOLDEN.astype(object).where(GOLDEN.notna(), None)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected, check_dtype=False)

    downloaded = first[first["status"] == "downloaded"]
    for _, row in downloaded.iterrows():
        data = open(row["path"], "rb").read()
        assert data.startswith(b"%PDF-") and len(data) == row["bytes"] and len(row["sha256"]) == 64
    assert not list(tmp_path.glob("*.part")) and not list(tmp_path.glob(".*.part"))
    assert first.loc[first["input"] == "PMID:90000001", "pmcid"].item() == "PMC9000001"
    assert first.loc[first["input"] == "10.5555/demo.fast", "title"].item() == "A fast publisher's paper"
    assert "Cloudflare" in first.loc[first["input"] == "10.5555/demo.challenge", "error"].item()
    gone, notice = (first.set_index("input").loc[d] for d in ("10.5555/demo.gone", "10.5555/demo.gone.retraction"))
    assert bool(gone["retracted"]) and gone["updates"] == "retraction 10.5555/demo.gone.retraction 2024-05-01 (retraction-watch)"
    assert bool(notice["is_notice"]) and not bool(notice["retracted"])
    assert len(requests_first) > 0 and not requests_first["url"].str.contains("tester@uni.example").any()

    # A re-run never downloads twice and does not ask again what the services called absent.
    served_before = world.requests_served()
    with retriever(tmp_path, world.endpoints, **RETRYING, http_options=unpaced_world) as r:
        second = r.download(DEMO_INPUTS)
    again = second.set_index("input", drop=False)
    for inp in downloaded["input"]:
        assert again.loc[inp, "status"] == "already_downloaded"
    assert again.loc["10.5555/demo.unknown", "status"] == "not_found"
    assert again.loc["10.5555/demo.closed", "status"] == "no_open_copy"
    retried = {"10.5555/demo.forbidden", "10.5555/demo.challenge", "10.5555/demo.robots", "10.5555/demo.held",
               "10.5555/demo.gone", "10.5555/demo.down"}
    assert set(second.loc[second["status"].isin(["downloaded", "already_downloaded", "not_found", "no_open_copy", "invalid_identifier"]) == False, "input"]) == retried  # noqa: E712
    assert world.requests_served() - served_before < 40  # only the failures were retried


def test_a_modified_file_is_downloaded_again(world, tmp_path):
    with retriever(tmp_path, world.endpoints, **RETRYING) as r:
        first = r.download(["10.5555/demo.fast2"])
    path = first.loc[0, "path"]
    with open(path, "ab") as handle:
        handle.write(b"tampered")
    with retriever(tmp_path, world.endpoints, **RETRYING) as r:
        second = r.download(["10.5555/demo.fast2"])
    assert second.loc[0, "status"] == "downloaded"


def test_download_frame_leaves_the_input_untouched_and_joins_outcomes(world, tmp_path):
    df = pd.DataFrame({"doi": ["10.5555/demo.slow1", "nonsense", None], "note": ["a", "b", "c"]}, index=[10, 20, 30])
    before = df.copy()
    with retriever(tmp_path, world.endpoints, **RETRYING) as r:
        joined = r.download_frame(df, column="doi")
    pd.testing.assert_frame_equal(df, before)
    assert list(joined.index) == [10, 20, 30]
    assert list(joined["status"]) == ["downloaded", "invalid_identifier", "invalid_identifier"]
    assert list(joined["note"]) == ["a", "b", "c"]
    pd.testing.assert_series_equal(joined["doi"], df["doi"])  # the caller's column, untouched
    assert joined["doi_paperfetch"].iloc[0] == "10.5555/demo.slow1"
    assert str(tmp_path) in joined["path"].iloc[0] and joined["path"].iloc[0].startswith("/")


def test_unknown_source_or_endpoint_names_are_refused(world, tmp_path):
    with pytest.raises(ValueError, match="choose from"):
        Retriever(out_dir=tmp_path, sources=["scihub"])
    with pytest.raises(ValueError, match="choose from"):
        Retriever(out_dir=tmp_path, endpoints={"scihub": "http://127.0.0.1:1"})


def test_retriever_repr_hides_the_email(tmp_path):
    r = Retriever(email="secret.person@uni.edu", out_dir=tmp_path, progress=False)
    assert "secret.person" not in repr(r)


def test_cli_download_against_loopback_endpoints(world, tmp_path, monkeypatch, capsys):
    for name, url in world.endpoints.items():
        monkeypatch.setenv(f"PAPERFETCH_{name.upper()}_URL", url)
    report = tmp_path / "outcomes.csv"
    code = main(["download", "10.5555/demo.fast", "PMID:90000001", "--email", "cli@uni.example", "--out", str(tmp_path / "pdfs"),
                 "--report", str(report), "--no-progress", "--delay-min", "0.01", "-v"])  # -v: the per-host table too
    assert code == 0
    out = capsys.readouterr().out
    assert "downloaded" in out and "Per-host table" in out and "cli@uni.example" not in out
    table = out[out.index("Per-host table"):]
    assert "delay s" in table and "0.0" not in table.split()  # seconds to one decimal, zero backoff left empty
    assert not {"NaN", "NaT", "None", "<NA>", "0.010000"} & set(table.split())  # empty cells empty
    frame = pd.read_csv(report)
    assert list(frame["status"]) == ["downloaded", "downloaded"]


def test_cli_reads_a_csv_column_and_accepts_pypaperretriever_flags(world, tmp_path, monkeypatch, capsys):
    for name, url in world.endpoints.items():
        monkeypatch.setenv(f"PAPERFETCH_{name.upper()}_URL", url)
    monkeypatch.setenv("PAPERFETCH_DELAY_MIN", "0")  # no configured gap between requests: the flags are tested
    monkeypatch.setenv("PAPERFETCH_DELAY_MAX", "0")
    csv = tmp_path / "in.csv"
    pd.DataFrame({"doi": ["10.5555/demo.slow2", "junk"]}).to_csv(csv, index=False)
    assert main(["download", "--input", str(csv), "--column", "doi", "--dwn-dir", str(tmp_path / "o"), "--no-progress",
                 "--email", "x@uni.example"]) == 1  # "junk" is an invalid identifier: not every paper finished well
    assert main(["download", "--doi", "10.5555/demo.fast", "--dwn-dir", str(tmp_path / "o2"), "--no-progress"]) == 0


def test_cli_usage_errors_exit_2(tmp_path, capsys):
    assert main(["download"]) == 2
    assert main(["download", "--input", str(tmp_path / "missing.csv")]) == 2
    assert main(["frobnicate"]) == 2


def test_ctrl_c_stops_promptly_keeps_finished_items_and_the_next_run_resumes(world, tmp_path):
    import _thread
    import time

    from paperfetch.ledger import SqliteLedger

    inputs = [p for p in DEMO_INPUTS if isinstance(p, str) and "demo." in p and "unknown" not in p]
    r = retriever(tmp_path, world.endpoints, **RETRYING, http_options={"rate_limit_min_s": 0.4, "rate_limit_max_s": 0.5})
    pdfs_seen = []

    def a_paper_is_on_record() -> bool:
        with SqliteLedger.in_folder(tmp_path) as ledger:
            return bool((ledger.entries()["status"] == "downloaded").any())

    def interrupt_after_two_pdfs(event):
        # Ctrl-C arrives while the batch is running: at the second PDF response, once a paper is on record
        # (an event, not a time: the two PDFs may come from two hosts at once)
        if event.kind.value == "response" and event.status == 200 and "/pdf/" in (event.url or ""):
            pdfs_seen.append(event.url)
            if len(pdfs_seen) == 2:
                deadline = time.monotonic() + 20
                while not a_paper_is_on_record() and time.monotonic() < deadline:
                    time.sleep(0.01)
                _thread.interrupt_main()

    r.web.subscribe(interrupt_after_two_pdfs)
    with pytest.raises(KeyboardInterrupt):
        r.download(inputs)
    # nothing of the batch outlives the call: no thread, no request, no file
    assert [t.name for t in threading.enumerate() if t.name.startswith("paperfetch-")] == []
    served = world.requests_served()
    files = sorted(p.name for p in tmp_path.iterdir())
    time.sleep(2 * 0.5)  # twice the longest interval of the run (rate_limit_max_s)
    assert world.requests_served() == served
    assert sorted(p.name for p in tmp_path.iterdir()) == files
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]  # no partial file anywhere
    with SqliteLedger.in_folder(tmp_path) as ledger:
        finished = ledger.entries()
    done = set(finished.loc[finished["status"] == "downloaded", "key"])
    assert done, "some items finished before the interrupt"
    # every PDF on disk has its ledger row
    recorded = {Path(p).name for p in finished["path"].dropna()}
    assert {p.name for p in tmp_path.glob("*.pdf")} <= recorded
    second = retriever(tmp_path, world.endpoints, **RETRYING).download(inputs)
    resumed = set("doi:" + second.loc[second["status"] == "already_downloaded", "doi"])
    assert done <= resumed


def test_outcomes_input_column_keeps_inputs_as_given():
    from paperfetch.outcomes import outcomes_frame

    frame = outcomes_frame([{"input": "10.1/x", "status": "not_found"}, {"input": None, "status": "invalid_identifier"}])
    assert frame["input"].dtype == object and list(frame["input"]) == ["10.1/x", None]


# ---------------------------------------------------------------- Semantic Scholar and bioRxiv/medRxiv


def test_a_paper_only_semantic_scholar_knows_is_downloaded_from_one_batch_request(tmp_path):
    with DemoWorld(base_ip=120) as world:
        with retriever(tmp_path, world.endpoints, **RETRYING) as r:
            out = r.download(["10.5555/demo.s2only", "10.5555/demo.fast", "10.5555/demo.unknown"])
        s2 = world.hosts["semanticscholar"]
        assert s2.hits("/graph/v1/paper/batch") == 1  # the three DOIs in one POST
        assert s2.hits() == 1
    row = out.set_index("input").loc["10.5555/demo.s2only"]
    assert row["status"] == "downloaded" and row["source"] == "semanticscholar"
    assert Path(row["path"]).read_bytes().startswith(b"%PDF")
    assert out.set_index("input").loc["10.5555/demo.unknown", "status"] == "not_found"


def test_a_biorxiv_preprint_is_found_through_details_and_medrxiv_is_asked_only_when_biorxiv_does_not_know(tmp_path):
    with DemoWorld(base_ip=120) as world:
        biorxiv = host_key(world.hosts["biorxiv"].base_url)  # without bioRxiv's 1 s interval: the route is tested
        with retriever(tmp_path, world.endpoints, **RETRYING, http_options={"host_intervals": {biorxiv: 0.0}}) as r:
            out = r.download(["10.1101/2026.01.05.000001", "10.64898/2026.02.02.000002"])
        paths = [p for _, p in world.hosts["biorxiv"].log]
    by_input = out.set_index("input")
    assert (by_input["status"] == "downloaded").all() and (by_input["source"] == "biorxiv").all()
    assert by_input.loc["10.1101/2026.01.05.000001", "url"].endswith("/content/10.1101/2026.01.05.000001v2.full.pdf")
    details = [p for p in paths if p.startswith("/details/")]
    assert sorted(details) == ["/details/biorxiv/10.1101/2026.01.05.000001", "/details/biorxiv/10.64898/2026.02.02.000002",
                               "/details/medrxiv/10.64898/2026.02.02.000002"]
