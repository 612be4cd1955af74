"""The Retriever's outcome rows: interrupts that keep what finished, a short ``reason`` column, identifiers
from doi/pmid/pmcid per row, final HTTP answers, ``why`` and ``retry`` (docs/outcomes.md)."""

from __future__ import annotations

import _thread
import warnings

import pandas as pd
import pytest

from paperfetch.demo import DemoWorld
from paperfetch.errors import Interrupted
from paperfetch.ledger import SqliteLedger
from paperfetch.outcomes import COLUMNS, retried_by_rerun
from paperfetch.reasons import absent_reason, failure_reason
from tests._quick import retriever


@pytest.fixture(scope="module")
def world():
    with DemoWorld(base_ip=64) as w:
        yield w


# ---------------------------------------------------------------------- interrupts
def test_an_interrupted_download_raises_with_the_partial_frame_one_row_per_input_kept_on_the_retriever(world, tmp_path, capsys):
    inputs = ["10.5555/demo.fast", "10.5555/demo.fast2", "10.5555/demo.slow1", "10.5555/demo.slow2",
              "10.5555/demo.slow3", "not a doi"]
    r = retriever(tmp_path, world.endpoints, http_options={"rate_limit_min_s": 0.4, "rate_limit_max_s": 0.5}, verbosity=1)
    seen = []

    def interrupt_after_one_pdf(event):
        if event.kind.value == "response" and event.status == 200 and "/pdf/" in (event.url or ""):
            seen.append(event.url)
            if len(seen) == 1:
                _thread.interrupt_main()

    r.web.subscribe(interrupt_after_one_pdf)
    with r, pytest.raises(Interrupted) as caught:
        r.download(inputs)
    assert isinstance(caught.value, KeyboardInterrupt)
    partial = caught.value.partial
    assert list(partial.columns) == list(COLUMNS)  # the full schema, however the run ended
    assert list(partial["input"]) == inputs
    statuses = list(partial["status"].astype(str))
    assert "downloaded" in statuses and "stopped" in statuses
    assert statuses[-1] == "invalid_identifier"
    finished = sum(s != "stopped" for s in statuses)
    line = f"interrupted: {finished} of {len(inputs)} finished; run the same call again to resume"
    assert str(caught.value) == line  # the traceback's last line: said once, not printed beside it too
    assert line not in capsys.readouterr().err
    assert r.last_outcomes is partial  # the partial frame without try/except (e.g. the notebook's next cell)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    # no internal frame: the traceback starts at download()
    frames = []
    tb = caught.value.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert frames[1:] == ["download"]  # the caller's frame, then download(): nothing of the machinery


# ---------------------------------------------------------------------- reason
def test_reason_is_short_and_first_in_error(world, tmp_path):
    with retriever(tmp_path, world.endpoints) as r:
        out = r.download(["10.5555/demo.forbidden", "10.5555/demo.robots", "10.5555/demo.closed", "10.5555/demo.gone",
                          "10.5555/demo.fast"])
    assert r.last_outcomes is out  # a finished call's result is the last outcomes too
    by = dict(zip(out["doi"], zip(out["status"].astype(str), out["reason"], out["error"])))
    status, reason, error = by["10.5555/demo.forbidden"]
    assert status == "host_suppressed" and reason.startswith("HTTP 403 → host suppressed")
    assert error.startswith(reason)
    status, reason, _ = by["10.5555/demo.robots"]
    assert reason.startswith("robots.txt disallows /")
    status, reason, _ = by["10.5555/demo.closed"]
    assert status == "no_open_copy" and reason.startswith("no source has an open copy (asked: ") and "unpaywall" in reason
    assert pd.isna(by["10.5555/demo.fast"][1])
    assert reason.endswith(")") and reason.count("(") == reason.count(")")  # whole: the list of sources closed
    asked = reason[len("no source has an open copy (asked: "):-1].split(", ")
    assert len(asked) >= 5 and len(reason) > 80 and {"unpaywall", "openalex", "crossref"} <= set(asked), reason


def test_reason_table_of_cases():
    from datetime import datetime, timezone

    until = datetime.now(timezone.utc).replace(hour=7, minute=28)
    assert failure_reason("host_suppressed", http_status=403, until=until) == "HTTP 403 → host suppressed until 07:28 UTC"
    assert failure_reason("host_held", until=until) == "server asked to wait until 07:28 UTC"
    assert failure_reason("disallowed_by_robots", url="http://h.example/pdf/x.pdf") == "robots.txt disallows /pdf/"
    assert absent_reason(known=True, asked=["unpaywall", "openalex", "europepmc"]) == \
        "no source has an open copy (asked: unpaywall, openalex, europepmc)"


REFUSED = ("http://127.0.0.1:9/x.pdf is unreachable: _HTTPPool(host='127.0.0.1', port=9): Max retries exceeded with url:"
           " /x.pdf (Caused by NewConnectionError(\"HTTPConnection(host='127.0.0.1', port=9): Failed to establish a new"
           " connection: [Errno 111] Connection refused\"))")
NO_DNS = ("http://gone.invalid/x.pdf is unreachable: _HTTPPool(host='gone.invalid', port=80): Max retries exceeded with"
          " url: /x.pdf (Caused by NameResolutionError(\"HTTPConnection(host='gone.invalid', port=80): Failed to"
          " resolve 'gone.invalid' ([Errno -2] Name or service not known)\"))")
OPEN = ("127.0.0.1:9 is unreachable (unreachable: ConnectionError (3 failures in a row)); http://127.0.0.1:9/x.pdf"
        " not requested, next try after 18:29:06 UTC")


def test_network_reasons_lose_the_repr_tail_and_are_never_cut():
    assert failure_reason("network_error", message=REFUSED) == "network: [Errno 111] Connection refused"
    assert failure_reason("network_error", message=f"unpaywall: {REFUSED}") == "network: [Errno 111] Connection refused"
    dns = failure_reason("network_error", message=NO_DNS)
    assert dns == "network: Failed to resolve 'gone.invalid' ([Errno -2] Name or service not known)"
    for message in ("a.example is unreachable (" + "very " * 30 + "long)", "word " * 40, "x" * 200):
        assert failure_reason("network_error", message=message) == "network: " + " ".join(message.split())
    held = failure_reason("host_held", message="h.example: " + "a long hold " * 10 + "until 07:28 UTC")
    assert held.endswith("until 07:28 UTC") and len(held) > 80  # the time kept
    assert failure_reason("network_error", message=OPEN).startswith("network: 127.0.0.1:9 is unreachable")


def test_invalid_inputs_have_a_reason(world, tmp_path):
    with retriever(tmp_path, world.endpoints) as r:
        out = r.download(["not a doi", "", "10.1/", "PMID:abc"])
    assert list(out["status"].astype(str)) == ["invalid_identifier"] * 4
    assert list(out["reason"]) == ["not a DOI, PMID, PMCID or arXiv ID", "blank input", "not a DOI", "not a PMID"]


# ---------------------------------------------------------------------- download_frame
def test_download_frame_uses_doi_then_pmid_then_pmcid_and_names_rows_without_one(world, tmp_path):
    df = pd.DataFrame({"doi": ["10.5555/demo.fast", None, None], "pmid": [None, "90000001", None],
                       "title": ["a", "b", "c"]})
    with retriever(tmp_path, world.endpoints) as r:
        joined = r.download_frame(df)
    assert list(joined["status"].astype(str)) == ["downloaded", "downloaded", "invalid_identifier"]
    assert joined["reason"].iloc[2] == "no identifier in this row"
    assert "no identifier in this row" in joined["error"].iloc[2]
    assert list(joined["title"]) == ["a", "b", "c"]


def test_download_frame_columns_list_and_did_you_mean(world, tmp_path):
    from paperfetch.errors import ConfigurationError

    with retriever(tmp_path, world.endpoints) as r:
        with pytest.raises(ConfigurationError, match="did you mean"):
            r.download_frame(pd.DataFrame({"DOI": ["10.5555/demo.fast"]}), column="DOI2")
        joined = r.download_frame(pd.DataFrame({"x": ["PMID:90000001"]}), columns=["x"])
    assert list(joined["status"].astype(str)) == ["downloaded"]


def test_download_frame_reads_a_doi_or_pmid_column_whatever_its_case_and_says_so(world, tmp_path, caplog):
    df = pd.DataFrame({"DOI": ["10.5555/demo.fast", None], "PMID": [None, "90000001"], "Title": ["a", "b"]})
    with retriever(tmp_path, world.endpoints) as r, caplog.at_level("INFO", logger="paperfetch"):
        joined = r.download_frame(df)
    assert list(joined["status"].astype(str)) == ["downloaded", "downloaded"]
    assert list(joined.columns[:3]) == ["DOI", "PMID", "Title"] and joined["doi"].iloc[0] == "10.5555/demo.fast"
    said = [rec.getMessage() for rec in caplog.records if "column" in rec.getMessage()]
    assert any("'DOI'" in line and "'PMID'" in line for line in said), said


def test_download_frame_refuses_two_columns_that_differ_only_in_case(world, tmp_path):
    from paperfetch.errors import ConfigurationError
    from paperfetch.flow.rows import identifier_columns

    assert identifier_columns(["Doi", "x"]) == ["Doi"]
    assert identifier_columns(["doi", "DOI", "pmid"]) == ["doi", "pmid"]  # the exact name wins
    with retriever(tmp_path, world.endpoints) as r, pytest.raises(ConfigurationError, match="'DOI', 'Doi'"):
        r.download_frame(pd.DataFrame({"DOI": ["10.5555/demo.fast"], "Doi": ["10.5555/demo.fast"]}))


def test_download_frame_joins_the_outcome_columns_with_their_dtypes(world, tmp_path):
    from paperfetch.outcomes import DTYPES

    df = pd.DataFrame({"doi": ["10.5555/demo.fast", "not a doi"], "note": ["x", "y"]}, dtype=str)
    with retriever(tmp_path, world.endpoints) as r:
        joined = r.download_frame(df)
    for name, dtype in DTYPES.items():
        target = f"{name}_paperfetch" if name in df.columns else name
        if name != "input":
            assert joined[target].dtype == pd.Series([], dtype=dtype).dtype, name


# ---------------------------------------------------------------------- final answers, stable statuses
def test_a_410_is_final_in_the_ledger_and_not_asked_again_unless_forced(world, tmp_path):
    with retriever(tmp_path, world.endpoints) as r:
        first = r.download(["10.5555/demo.gone"])
    assert first["status"].iloc[0] == "http_error" and first["http_status"].iloc[0] == 410
    assert not retried_by_rerun("http_error", 410) and retried_by_rerun("http_error", 503)
    with SqliteLedger.in_folder(tmp_path) as ledger:
        assert not ledger.should_retry("doi:10.5555/demo.gone")
    before = world.requests_served()
    with retriever(tmp_path, world.endpoints) as r:
        again = r.download(["10.5555/demo.gone"])
    assert world.requests_served() == before  # the ledger answered
    assert again["status"].iloc[0] == "http_error"
    with retriever(tmp_path, world.endpoints, resume=False) as r:
        r.download(["10.5555/demo.gone"])
    assert world.requests_served() > before


def test_a_paper_keeps_its_status_when_a_later_run_finds_its_host_suppressed():
    from types import SimpleNamespace

    from paperfetch.flow.rows import keep_describing_status

    prior = SimpleNamespace(status="invalid_pdf", source="openalex", url="http://h/pdf/x", http_status=200,
                            error="not a PDF: an HTML page")
    row = {"status": "host_suppressed", "reason": "HTTP 403 → host suppressed until 07:28 UTC", "error": "…",
           "source": "unpaywall", "url": "http://h/pdf/y", "http_status": 403}
    kept = keep_describing_status(row, prior)
    # the reason is always the reason of the row's status: this run's block is in error
    assert kept["status"] == "invalid_pdf" and kept["reason"] == "not a PDF: an HTML page"
    assert kept["error"].startswith("not a PDF: an HTML page | this run: ") and "earlier: not a PDF" in kept["error"]
    assert row["reason"] in kept["error"]
    prior.extra = {"reason": "not a PDF: a bot challenge"}
    assert keep_describing_status(row, prior)["reason"] == "not a PDF: a bot challenge"
    assert keep_describing_status(row, None) == row
    assert keep_describing_status({**row, "status": "network_error"}, prior)["status"] == "network_error"


# ---------------------------------------------------------------------- why and retry
def test_a_retried_row_that_keeps_its_status_says_that_status_s_reason(world, tmp_path):
    with retriever(tmp_path, world.endpoints, state="memory") as r:
        out = r.download(["10.5555/demo.challenge"])
        assert out["status"].astype(str).iloc[0] == "invalid_pdf"
        first = out["reason"].iloc[0]
        r.web.host_limiter(out["url"].iloc[0]).suppress("HTTP 403 for the PDF", r.web.clock.monotonic(), None)
        with warnings.catch_warnings():
            again = r.retry(out)
    assert again["status"].astype(str).iloc[0] == "invalid_pdf"
    assert again["reason"].iloc[0] == first and "suppressed" not in again["reason"].iloc[0]
    assert " | this run: " in again["error"].iloc[0] and "suppressed" in again["error"].iloc[0]


def test_why_lists_each_source_asked_and_its_answer(world, tmp_path):
    with retriever(tmp_path, world.endpoints) as r:
        r.download(["10.5555/demo.closed"])
        why = r.why("10.5555/demo.closed")
    assert list(why.columns) == ["source", "answer"]
    assert "unpaywall" in set(why["source"]) and len(why) >= 2
    assert r.why("10.5555/never.asked").empty


def test_why_names_only_the_sources_asked_and_never_contradicts_a_source(world, tmp_path):
    with retriever(tmp_path, world.endpoints) as r:
        r.download(["10.5555/demo.gone", "10.5555/demo.down"])
        answers = {doi: r.why(doi) for doi in ("10.5555/demo.gone", "10.5555/demo.down")}
    for doi, why in answers.items():
        assert "arxiv" not in set(why["source"]), why  # a plain DOI: arXiv has no copy and nothing was asked
        openalex = list(why.loc[why["source"] == "openalex", "answer"])
        assert openalex[0].startswith("knows it: 2 candidate(s)"), why
        assert "does not know it" not in openalex, why  # its landing page's 404 is not "does not know it"


def test_retry_runs_only_the_retryable_rows(world, tmp_path):
    with retriever(tmp_path, world.endpoints) as r:
        out = r.download(["10.5555/demo.fast", "10.5555/demo.closed", "10.5555/demo.down"])
        asked = []
        original = r.download
        r.download = lambda ids: asked.append(list(ids)) or original(ids)  # type: ignore[method-assign]
        with warnings.catch_warnings():
            again = r.retry(out)
    assert asked == [["10.5555/demo.down"]]
    assert list(again["input"]) == list(out["input"])
    assert list(again.columns) == list(out.columns)


# ---------------------------------------------------------------------- the CLI's side of it
def test_cli_shows_the_reason_explains_and_force_asks_again(world, tmp_path, monkeypatch, capsys):
    from paperfetch.cli import main

    for name, url in world.endpoints.items():
        monkeypatch.setenv(f"PAPERFETCH_{name.upper()}_URL", url)
    monkeypatch.setenv("PAPERFETCH_DELAY_MIN", "0")  # no configured gap between requests: the output is tested
    monkeypatch.setenv("PAPERFETCH_DELAY_MAX", "0")
    monkeypatch.setenv("COLUMNS", "200")  # wide enough for the whole reason, whatever terminal runs the tests
    failed = tmp_path / "failed.txt"
    args = ["download", "10.5555/demo.closed", "10.5555/demo.down", "10.5555/demo.forbidden", "--email", "cli@uni.example",
            "--out", str(tmp_path / "pdfs"), "--no-progress", "--failed", str(failed)]
    assert main([*args, "--explain"]) == 1
    out = capsys.readouterr().out
    assert "no source has an open copy (asked:" in out  # the reason, not the cut error
    assert "why 10.5555/demo.closed (no_open_copy):" in out and "  unpaywall: " in out
    # every input that did not finish well, in two sections: what a re-run retries, and the final no_open_copy
    retried, _, final = failed.read_text().partition("# final answers")
    assert {line for line in retried.splitlines() if line and not line.startswith("#")} == {
        "10.5555/demo.down", "10.5555/demo.forbidden"}
    assert [line for line in final.splitlines()[1:] if line] == ["10.5555/demo.closed"]
    before = world.requests_served()
    assert main(["download", "10.5555/demo.closed", "--email", "cli@uni.example", "--out", str(tmp_path / "pdfs"),
                 "--no-progress"]) == 1
    assert world.requests_served() == before  # final: the ledger answers
    assert main(["download", "10.5555/demo.closed", "--email", "cli@uni.example", "--out", str(tmp_path / "pdfs"),
                 "--no-progress", "--force"]) == 1
    assert world.requests_served() > before


def test_the_ledgers_default_rule_makes_404_and_410_final(tmp_path):
    with SqliteLedger.in_folder(tmp_path) as ledger:
        ledger.record("doi:10.1/gone", status="http_error", http_status=410)
        ledger.record("doi:10.1/missing", status="http_error", http_status=404)
        ledger.record("doi:10.1/busy", status="http_error", http_status=503)
        ledger.record("doi:10.1/closed", status="no_open_copy")
        assert not ledger.should_retry("doi:10.1/gone") and not ledger.should_retry("doi:10.1/missing")
        assert ledger.should_retry("doi:10.1/busy") and not ledger.should_retry("doi:10.1/closed")
