"""Nothing a server or an input can do stops a batch, exhausts memory, or leaves litter.

Hostile metadata answers, identifiers, URLs built from identifiers, slow and
bombing servers, redirects to internal addresses, concurrent processes on one
folder and kill -9 at random points — each ends in a clear row or typed error,
within its deadline and (measured in a subprocess) under 300 MB peak RSS.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from decimal import Decimal
from pathlib import Path

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperfetch import HttpClient, parse_identifier
from paperfetch.demo import DemoWorld, fake_pdf
from paperfetch.errors import DeadlineExceeded, DownloadTooLarge, MalformedResponse, RefusedRedirect
from paperfetch.http import addresses
from paperfetch.http.addresses import redirect_refusal
from paperfetch.http.hosts import host_key
from paperfetch.http.limits import Deadline, read_limited
from paperfetch.ids import parse_many
from paperfetch.ledger import SqliteLedger
from paperfetch.parts import PART_PREFIX, part_file, sweep_stale_parts
from paperfetch.sources import SOURCES
from paperfetch.sources.base import RequestSpec, quote_path
from paperfetch.testing import LoopbackHost, Reply
from paperfetch.validate import check_pdf_file
from tests._hostile_servers import RawServer, gzip_bomb, head, once, trickle
from tests._quick import retriever, unpaced

REPO = Path(__file__).resolve().parents[1]
FAST = {"network_retry_base_s": 0.01, "rate_limit_min_s": 0.01, "rate_limit_max_s": 0.02}
EMAIL = "tester@uni.example"


def spec_for(source, value="10.1000/x"):
    ident = parse_identifier(value)
    specs = source.requests_for([ident])
    return specs[0] if specs else RequestSpec(path="/", params={}, ids=(ident,))


# ------------------------------------------------------------------ 1. metadata answers

UNREADABLE = [b"{not json", b"", b"\xff\xfe\x00", b"[1, 2]", b"null", b'"a string"', b"42", b"[" * 100_000]


@pytest.mark.parametrize("name", sorted(SOURCES))
@pytest.mark.parametrize("body", UNREADABLE, ids=lambda b: repr(b[:12]))
def test_an_unreadable_answer_is_a_malformed_response_naming_the_service(name, body):
    source = SOURCES[name](identification=_ident())
    with pytest.raises(MalformedResponse, match=name):
        source.read(body, spec_for(source, "PMID:123" if name == "ncbi_eutils" else "10.1000/x"))


def _ident():
    from paperfetch.config import Identification

    return Identification(email=EMAIL)


def test_wrong_shaped_openalex_fields_are_absent():
    source = SOURCES["openalex"](identification=_ident())
    ids = (parse_identifier("10.1000/a"), parse_identifier("10.1000/b"))
    spec = RequestSpec(path="/works", params={}, ids=ids)
    for results in (None, "junk", 3, [None, "x", 1, []], {"doi": 1}):
        assert source.read(json.dumps({"results": results}).encode(), spec) == {}
    work = {
        "doi": "https://doi.org/10.1000/A", "best_oa_location": "a string", "publication_year": "abc",
        "locations": [None, "x", {"is_oa": True, "pdf_url": "https://repo.example/a.pdf", "version": ["v"]}],
        "open_access": [], "ids": "nope", "primary_location": {"source": "str"}, "title": {"no": 1},
    }
    record = source.read(json.dumps({"results": [work, None, {"doi": None}]}).encode(), spec)["doi:10.1000/a"]
    assert (record.year, record.title, record.journal, record.is_oa) == (None, None, None, None)
    assert [c.url for c in record.candidates] == ["https://repo.example/a.pdf"]
    assert record.candidates[0].version is None


def test_wrong_shaped_unpaywall_fields_are_absent():
    source = SOURCES["unpaywall"](identification=_ident())
    spec = spec_for(source)
    body = {"doi": "10.1000/x", "year": "abc", "is_oa": "yes", "title": ["t"], "journal_name": None,
            "best_oa_location": [1, 2], "oa_locations": [None, "x", {"url_for_pdf": ["no"], "url": "http://[::1"},
                                                          {"url_for_pdf": "https://ok.example/p.pdf", "license": 5}]}
    record = source.read(json.dumps(body).encode(), spec)["doi:10.1000/x"]
    assert (record.year, record.is_oa, record.title) == (None, None, None)
    assert [(c.url, c.license) for c in record.candidates] == [("https://ok.example/p.pdf", None)]
    for year in ("2021", 2021):
        assert source.read(json.dumps({**body, "year": year}).encode(), spec)["doi:10.1000/x"].year == 2021


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
    | st.sampled_from(["https://doi.org/10.1000/x", "10.1000/x", "https://a.example/p.pdf", "Y", "ok", "\ud800"]),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["results", "doi", "DOI", "message", "status", "best_oa_location", "oa_locations",
                                       "locations", "url_for_pdf", "pdf_url", "is_oa", "year", "publication_year",
                                       "resultList", "result", "records", "pmid", "pmcid", "link", "URL", "title",
                                       "fullTextUrlList", "fullTextUrl", "isOpenAccess", "license", "date-parts",
                                       "issued", "open_access", "oa_url", "requested-id", "content-type"]),
                      inner, max_size=6),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=JSON, name=st.sampled_from(sorted(SOURCES)))
def test_any_json_shape_gives_records_or_a_malformed_response(data, name):
    source = SOURCES[name](identification=_ident())
    try:
        body = json.dumps(data).encode("utf-8", "surrogatepass")
    except (ValueError, TypeError):
        body = b"{"
    try:
        records = source.read(body, spec_for(source, "PMID:123" if name == "ncbi_eutils" else "10.1000/x"))
    except MalformedResponse as exc:
        assert name in str(exc)
        return
    for record in records.values():
        assert record.year is None or isinstance(record.year, int)
        for cand in record.candidates:
            cand.url.encode("utf-8")  # never a lone surrogate on its way to the transport


def test_an_invalid_openalex_batch_answer_does_not_end_the_batch(hosts, tmp_path):
    bad = hosts("127.0.0.91", {"*": Reply(200, b"{not json", {"Content-Type": "application/json"})})
    endpoints = {k: bad.base_url for k in ("openalex", "unpaywall", "crossref", "europepmc", "doi")}
    with retriever(tmp_path, endpoints, respect_robots_txt=False, http_options={"host_intervals": unpaced(endpoints)}) as r:
        out = r.download([f"10.1000/{n}" for n in range(3)] + ["nonsense"])
    assert len(out) == 4
    assert list(out["status"]) == ["http_error"] * 3 + ["invalid_identifier"]
    assert all("not valid JSON" in e for e in out["error"][:3])


# ------------------------------------------------------------------ 2. identifiers


class _Raising:
    def __repr__(self):
        raise RuntimeError("no repr")

    __str__ = __repr__


HOSTILE_INPUTS = ["10.1000/\ud800", Decimal("sNaN"), Decimal("NaN"), _Raising(), b"\xff\xfe", b"10.1000/bytes",
                  float("nan"), None, "x" * 1_000_000, "10.1000/" + "y" * 1_000_000, object(), [1], 10**5000, 1e308,
                  -5, complex(1, 2), "", "   ", "10.1000/ok"]


def test_any_python_object_gets_a_row_with_a_message():
    parsed = parse_many(HOSTILE_INPUTS)
    assert len(parsed) == len(HOSTILE_INPUTS)
    for item in parsed:
        assert item.identifier is not None or (isinstance(item.error, str) and item.error)
        if item.error:
            item.error.encode("utf-8")
    assert "surrogate" in parsed[0].error


def test_download_gives_hostile_inputs_one_row_each(hosts, tmp_path):
    absent = hosts("127.0.0.92", {"*": Reply(404, b"{}")})
    endpoints = {k: absent.base_url for k in ("openalex", "unpaywall", "crossref", "europepmc", "doi", "semanticscholar")}
    with retriever(tmp_path, endpoints, respect_robots_txt=False,  # every service on loopback: all say "absent"
                   http_options={"host_intervals": unpaced(endpoints)}) as r:
        out = r.download(HOSTILE_INPUTS)
    assert len(out) == len(HOSTILE_INPUTS)
    valid = [item.identifier is not None for item in parse_many(HOSTILE_INPUTS)]
    assert sum(valid) == 2  # b"10.1000/bytes" and "10.1000/ok"
    for ok, status, error in zip(valid, out["status"], out["error"]):
        assert status == ("not_found" if ok else "invalid_identifier") and error


def _surrogate_shapes() -> list:
    """A lone surrogate at every position of every identifier form, and identifiers built without parsing."""
    from paperfetch.ids import Identifier, IdType

    bases = ["10.1000/abc.def", "doi:10.1000/x", "PMID:12345", "PMC123", "arXiv:2101.00001v2", "arXiv:hep-th/9901001",
             "https://doi.org/10.1000/x", "https://arxiv.org/abs/2101.00001", "https://pubmed.ncbi.nlm.nih.gov/12345/",
             "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC123/", "http://a.example/p.pdf", "10.1000/x%ED%A0%80"]
    shapes: list = []
    for base in bases:
        for surrogate in ("\ud800", "\udfff", "\udcff"):
            shapes += [base[:i] + surrogate + base[i:] for i in range(0, len(base) + 1, 3)]
            shapes += [base + surrogate, base + "#" + surrogate, surrogate + " " + base]
    shapes += [Identifier(IdType.DOI, "10.1000/\ud800"), Identifier(IdType.PMID, "1\ud800"),
               Identifier(IdType.PMCID, "PMC1\udfff"), Identifier(IdType.ARXIV, "2101.00001\ud800"),
               Identifier(IdType.ARXIV, "2101.00001", "v\ud800"), Identifier(IdType.DOI, "10.1000/ok")]
    return shapes


def test_a_lone_surrogate_anywhere_gives_a_row_and_nothing_raises(hosts, tmp_path):
    """Every input is a row: a surrogate in a DOI suffix, a label, an arXiv form, a URL, or an Identifier built
    directly (its key would reach the ledger, the URLs and the file name)."""
    shapes = _surrogate_shapes()
    absent = hosts("127.0.0.94", {"*": Reply(404, b"{}")})
    endpoints = {k: absent.base_url for k in ("openalex", "unpaywall", "crossref", "europepmc", "ncbi_idconv",
                                              "ncbi_eutils", "doi", "arxiv", "biorxiv", "semanticscholar")}
    for resume in (True, False):
        with retriever(tmp_path / str(resume), endpoints, respect_robots_txt=False, resume=resume,
                       http_options={"host_intervals": {host_key(absent.base_url): 0.0}}) as r:
            out = r.download(shapes)
            assert len(out) == len(shapes)
            for shape in shapes[-6:]:
                one = r.download([shape])  # alone too: a batch of one takes other paths
                assert len(one) == 1
    parsed = parse_many(shapes)
    assert sum(item.identifier is not None for item in parsed) == 1  # the built 10.1000/ok
    statuses = list(out["status"].astype(str))
    assert statuses[-6:-1] == ["invalid_identifier"] * 5 and statuses[-1] == "not_found"
    for item in parsed[-6:-1]:
        assert "surrogate" in item.error


# ------------------------------------------------------------------ 3. identifier text in URLs


def test_identifier_text_is_one_path_segment_in_every_source():
    for name, cls in SOURCES.items():
        source = cls(identification=_ident())
        for value in ("10.1000/../../etc/passwd", "10.1000/a?b=c#d", "10.1000/%2e%2e/x"):
            for spec in source.requests_for([parse_identifier(value)]):
                url, params = source.url_for(spec)
                prepared = requests.Request("GET", url, params=params).prepare()
                path = prepared.path_url.split("?", 1)[0]
                assert "/etc/passwd" not in path and "/../" not in path and not path.endswith("/.."), (name, path)
                assert "?b=c" not in prepared.url and "#" not in prepared.url
    with pytest.raises(ValueError):
        quote_path("..")


def test_dot_segments_never_reach_another_path_on_the_services(hosts, tmp_path):
    service = hosts("127.0.0.93", {"*": Reply(404, b"{}")})
    endpoints = {k: service.base_url for k in ("openalex", "unpaywall", "crossref", "europepmc", "doi", "semanticscholar",
                                               "biorxiv")}
    with retriever(tmp_path, endpoints, respect_robots_txt=False, http_options={"host_intervals": unpaced(endpoints)}) as r:
        out = r.download(["10.1000/../../etc/passwd", "10.1000/..%2F..%2Fadmin?x=1"])
    assert list(out["status"]) == ["not_found", "not_found"]
    paths = [p for _, p in service.log]
    assert paths and all(p.startswith(("/v2/", "/works", "/europepmc/", "/10.1000%2F", "/graph/v1/paper/batch"))
                         for p in paths), paths
    assert not any(p in ("/etc/passwd", "/admin") for p in paths)


# ------------------------------------------------------------------ 4. ledger and files under concurrent processes


def _open_ledger(folder, barrier, results):  # noqa: ANN001 - runs in a forked process
    try:
        barrier.wait()
        with SqliteLedger.in_folder(folder) as ledger:
            ledger.record(f"doi:10.1/{os.getpid()}", status="not_found")
        results.put(None)
    except Exception as exc:  # noqa: BLE001
        results.put(f"{type(exc).__name__}: {exc}")


def test_four_processes_create_one_ledger_fifty_times_without_a_failure(tmp_path):
    ctx = mp.get_context("fork")
    failures = []
    for trial in range(50):
        folder = tmp_path / str(trial)
        barrier, results = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_open_ledger, args=(folder, barrier, results)) for _ in range(4)]
        for p in procs:
            p.start()
        outcomes = [results.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(60)
        failures += [o for o in outcomes if o]
        with SqliteLedger.in_folder(folder) as ledger:
            assert len(ledger) == 4
    assert failures == []


OVERLAP_SCRIPT = textwrap.dedent("""
    import json, sys
    from paperfetch import Retriever
    endpoints, out_dir, ids = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
    with Retriever(email="tester@uni.example", out_dir=out_dir, endpoints=endpoints, progress=False, verbosity=0,
                   http_options={"network_retry_base_s": 0.01, "rate_limit_min_s": 0.01, "rate_limit_max_s": 0.02}) as r:
        out = r.download(ids)
    print(json.dumps(out[["input", "status", "path", "sha256"]].astype(object).where(out.notna(), None).to_dict("records")))
""")

DOWNLOADABLE = ["10.5555/demo.fast", "10.5555/demo.fast2", "10.5555/demo.slow1", "10.5555/demo.slow2",
                "10.5555/demo.slow3", "PMID:90000001", "arXiv:2101.00001v2"]


@pytest.mark.slow
def test_two_overlapping_batches_in_one_folder_write_every_file_once(tmp_path):
    with DemoWorld(base_ip=200) as world:
        ids_a, ids_b = DOWNLOADABLE, list(reversed(DOWNLOADABLE))
        procs = [subprocess.Popen([sys.executable, "-c", OVERLAP_SCRIPT, json.dumps(world.endpoints), str(tmp_path),
                                   json.dumps(ids)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for ids in (ids_a, ids_b)]
        outputs = [p.communicate(timeout=300) for p in procs]
        pdf_requests = [path for host in world.hosts.values() for _, path in host.log if path.endswith(".pdf")]
    rows = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    for batch in rows:
        assert {row["status"] for row in batch} <= {"downloaded", "already_downloaded"}, batch
        for row in batch:
            assert check_pdf_file(row["path"]).ok
    assert len(pdf_requests) == len(set(pdf_requests)), sorted(pdf_requests)  # no PDF fetched (written) twice
    pdfs = {Path(row["path"]).name for batch in rows for row in batch}
    others = [n for n in os.listdir(tmp_path) if n not in pdfs]
    assert all(n.startswith(".paperfetch-ledger.sqlite3") for n in others), others  # no part file, nothing else
    with SqliteLedger.in_folder(tmp_path) as ledger:
        assert len(ledger) == len(DOWNLOADABLE)


def test_part_files_have_one_writer_and_a_dead_writers_are_swept(tmp_path):
    dest = tmp_path / "doi_x.pdf"
    with part_file(dest) as claim:
        claim.handle.write(b"partial")
        assert claim.path.name.startswith(PART_PREFIX)
        assert sweep_stale_parts(tmp_path) == []  # held by a live writer (us)
    assert list(tmp_path.iterdir()) == []  # not committed: removed
    # a writer killed mid-write leaves its part file unlocked: the next sweep removes it
    child = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import os, signal
        from paperfetch.parts import part_file
        with part_file({str(dest)!r}) as claim:
            claim.handle.write(b"partial"); claim.handle.flush()
            os.kill(os.getpid(), signal.SIGKILL)
    """)], check=False)
    assert child.returncode == -signal.SIGKILL
    assert [p.name.startswith(PART_PREFIX) for p in tmp_path.iterdir()] == [True]
    other = tmp_path / ".doi_y.pdf.abc123xy.part"  # not a paperfetch part file: the sweep leaves it alone
    other.write_bytes(b"someone else's")
    os.utime(other, (time.time() - 7200,) * 2)
    assert [p.name.startswith(PART_PREFIX) for p in sweep_stale_parts(tmp_path)] == [True]
    assert list(tmp_path.iterdir()) == [other]


KILL_SCRIPT = textwrap.dedent("""
    import json, sys
    from paperfetch import Retriever
    endpoints, out_dir, ids, intervals = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
    with Retriever(email="tester@uni.example", out_dir=out_dir, endpoints=endpoints, sources=["unpaywall"],
                   respect_robots_txt=False, progress=False, verbosity=0, max_retries=0,
                   http_options={"network_retry_base_s": 0.01, "rate_limit_min_s": 0.0, "rate_limit_max_s": 0.0,
                                 "host_intervals": intervals}) as r:
        out = r.download(ids)
    print(json.dumps(list(out["status"])))
""")


def _wait_until(condition, seconds: float) -> None:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.002)


@pytest.mark.slow
def test_kill_9_at_twenty_points_leaves_only_finished_pdfs_and_the_ledger(tmp_path):
    pdf = fake_pdf("killed", size=200_000)
    gap = [0.005]  # between pieces while the trials are killed; the re-run, which only has to finish, gets 0

    def slow_pdf(conn, request, stopping):  # noqa: ANN001 - 200 kB in 20 pieces, 5 ms apart: ~0.1 s per PDF
        conn.sendall(head("200 OK", {"Content-Type": "application/pdf", "Content-Length": str(len(pdf))}))
        for start in range(0, len(pdf), 10_000):
            if stopping.wait(gap[0]):
                return
            conn.sendall(pdf[start:start + 10_000])

    with RawServer("127.0.0.95", slow_pdf) as publisher:
        def answer(request):
            doi = request.path[len("/v2/"):].replace("%2F", "/")
            body = {"doi": doi, "is_oa": True, "best_oa_location": {"url_for_pdf": f"{publisher.base_url}/{doi}.pdf"}}
            return Reply(200, json.dumps(body), {"Content-Type": "application/json"})

        with LoopbackHost("127.0.0.94", {"*": answer}) as unpaywall:
            endpoints = json.dumps({"unpaywall": unpaywall.base_url})
            ids: list[str] = []
            rng = random.Random(11)
            killed_mid_write = 0
            for pair in range(10):  # twenty trials, two at a time in the same folder (each its own batch)
                children = []
                for trial in (2 * pair, 2 * pair + 1):
                    batch = [f"10.1000/k{trial}-{n}" for n in range(6)]  # new work each time: the kill lands on writes
                    ids += batch
                    # no host_intervals: Unpaywall's own 0.1 s between lookups spreads a trial over the kill points
                    child = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, endpoints, str(tmp_path), json.dumps(batch),
                                              "{}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    children.append((rng.uniform(0.8, 2.5), child))  # a random point: start-up (~1 s), lookups, downloads
                if pair % 2 == 0:  # half the pairs are killed on an event, not a time: once one of them is writing
                    _wait_until(lambda: any(p.name.startswith(PART_PREFIX) for p in tmp_path.iterdir())
                                or all(child.poll() is not None for _, child in children), 60)
                    children = [(0.0, child) for _, child in children]
                started = time.monotonic()
                for at, child in sorted(children, key=lambda c: c[0]):
                    time.sleep(max(0.0, started + at - time.monotonic()))
                    child.send_signal(signal.SIGKILL)
                    child.wait(30)
                killed_mid_write += any(p.name.startswith(PART_PREFIX) for p in tmp_path.iterdir())
            # the re-run downloads what was never finished (about 100 PDFs) at full speed: no gap, no interval
            gap[0] = 0.0
            unpaced = json.dumps({host_key(unpaywall.base_url): 0.0})
            rerun = subprocess.run([sys.executable, "-c", KILL_SCRIPT, endpoints, str(tmp_path), json.dumps(ids), unpaced],
                                   capture_output=True, text=True, timeout=300)
    statuses = json.loads(rerun.stdout.strip().splitlines()[-1])
    assert set(statuses) <= {"downloaded", "already_downloaded"}
    names = sorted(p.name for p in tmp_path.iterdir())
    pdfs = [n for n in names if n.endswith(".pdf")]
    assert len(pdfs) == len(ids) and all(check_pdf_file(tmp_path / n).ok for n in pdfs)
    assert all(n.startswith(".paperfetch-ledger.sqlite3") for n in names if n not in pdfs)  # the ledger's files alone
    print(f"kill -9: 20 trials in 10 pairs, {killed_mid_write} pairs left a part file behind before the re-run swept it")
    assert killed_mid_write >= 1  # the test did kill writers mid-write (the pairs killed once one was writing)


# ------------------------------------------------------------------ 5. servers: slow, huge, broken


def _measure(code: str) -> dict:
    """Run *code* in a fresh interpreter; it prints a JSON dict. ``peak_rss_mb`` is added."""
    # VmHWM is the peak RSS of this interpreter's own memory map. ru_maxrss is not: Linux carries the
    # high-water mark across exec, so a child of a large pytest process would report the parent's size.
    wrapper = code + textwrap.dedent("""
        import resource, json as _j
        try:
            with open("/proc/self/status") as _status:
                _hwm = [line for line in _status if line.startswith("VmHWM:")][0]
            result["peak_rss_mb"] = int(_hwm.split()[1]) / 1024
        except (OSError, IndexError, ValueError):
            result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(_j.dumps(result))
    """)
    done = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def bomb():
    return gzip_bomb(1 << 30)  # 1 GiB of zeros, ~1 MB on the wire


def test_the_gzip_bomb_the_tests_serve_is_one_gzip_stream_of_zeros():
    import gzip

    assert gzip.decompress(gzip_bomb(5 << 20)) == bytes(5 << 20)  # one member: the CRC and the length check
    assert gzip.decompress(gzip_bomb(1 << 20)) == bytes(1 << 20)


@pytest.mark.slow
def test_a_gzip_bomb_as_a_metadata_answer_stays_under_300_mb(bomb):
    served = head("200 OK", {"Content-Type": "application/json", "Content-Encoding": "gzip",
                             "Content-Length": str(len(bomb))}) + bomb
    with RawServer("127.0.0.96", once(served)) as server:
        result = _measure(textwrap.dedent(f"""
            import time
            from paperfetch import HttpClient
            from paperfetch.errors import DownloadTooLarge
            c = HttpClient(respect_robots_txt=False, max_retries=0)
            started = time.monotonic()
            try:
                c.fetch("{server.base_url}/v2/10.1000%2Fx")
                result = {{"outcome": "read"}}
            except DownloadTooLarge as exc:
                result = {{"outcome": "DownloadTooLarge", "message": str(exc)}}
            result["seconds"] = time.monotonic() - started
        """))
    print(f"gzip bomb as metadata answer: {result}")
    assert result["outcome"] == "DownloadTooLarge" and result["peak_rss_mb"] < 300


@pytest.mark.slow
def test_a_gzip_bomb_as_a_pdf_stops_at_max_pdf_bytes_under_300_mb(bomb, tmp_path):
    served = head("200 OK", {"Content-Type": "application/pdf", "Content-Encoding": "gzip",
                             "Content-Length": str(len(bomb))}) + bomb
    with RawServer("127.0.0.97", once(served)) as server:
        result = _measure(textwrap.dedent(f"""
            from paperfetch import HttpClient
            from paperfetch.errors import DownloadTooLarge
            c = HttpClient(respect_robots_txt=False, max_retries=0)
            try:
                c.download("{server.base_url}/bomb.pdf", {str(tmp_path / 'bomb.pdf')!r}, max_bytes=50 * 1024 * 1024)
                result = {{"outcome": "written"}}
            except DownloadTooLarge as exc:
                result = {{"outcome": "DownloadTooLarge"}}
        """))
    print(f"gzip bomb as PDF: {result}")
    assert result["outcome"] == "DownloadTooLarge" and result["peak_rss_mb"] < 300
    assert list(tmp_path.iterdir()) == []


@pytest.mark.timeout(30)  # a real socket trickle: bounded whatever the deadline does
def test_a_pdf_trickling_one_byte_per_second_ends_at_the_deadline(tmp_path):
    with RawServer("127.0.0.98", trickle(fake_pdf("slow"), 1.0)) as server:
        c = HttpClient(respect_robots_txt=False, max_retries=0, request_deadline_s=1.0)
        with pytest.raises(DeadlineExceeded, match="deadline of 1 s"):
            c.download(f"{server.base_url}/slow.pdf", tmp_path / "slow.pdf")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.timeout(30)  # a real socket trickle: bounded whatever the deadline does
def test_a_robots_txt_trickling_one_byte_per_second_ends_at_the_deadline(tmp_path):
    def handler(conn, request, stopping):  # noqa: ANN001
        if b"robots.txt" in request.split(b"\r\n", 1)[0]:
            return trickle(b"User-agent: *\nDisallow:\n" * 100, 1.0, content_type="text/plain")(conn, request, stopping)
        conn.sendall(head("200 OK", {"Content-Type": "application/json", "Content-Length": "2"}) + b"{}")

    with RawServer("127.0.0.99", handler) as server:
        c = HttpClient(respect_robots_txt=True, max_retries=0, request_deadline_s=1.0)
        assert c.fetch(f"{server.base_url}/x").content == b"{}"  # robots unreachable -> allowed, as configured
        assert [line.split()[1] for line in server.requests] == [b"/robots.txt", b"/x"]
        assert c.snapshot(server.base_url).robots == "unreachable"  # cut at the deadline, 100 s before its end


@pytest.mark.timeout(30)  # a real socket trickle: bounded whatever the deadline does
def test_a_slow_json_answer_ends_at_the_deadline():
    with RawServer("127.0.0.100", trickle(b'{"doi": "10.1000/x"}' * 50, 0.5, content_type="application/json")) as server:
        c = HttpClient(respect_robots_txt=False, max_retries=0, request_deadline_s=1.5)
        with pytest.raises(DeadlineExceeded):
            c.fetch(f"{server.base_url}/v2/x")


@pytest.mark.parametrize(
    "payload, statuses",
    [
        (b"HTTP/1.1 200 OK\r\nContent-Ty", {"invalid_pdf", "network_error"}),  # closes mid-header
        (b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (10 << 20) + b"\r\n\r\n", {"network_error"}),  # a 10 MB header line
        (b"garbage\r\n\r\n", {"network_error"}),  # not HTTP at all
    ],
    ids=["closed-mid-header", "10MB-header-line", "not-http"],
)
def test_broken_heads_end_in_a_clear_row(payload, statuses, hosts, tmp_path):
    with RawServer("127.0.0.101", once(payload)) as publisher:
        service = hosts("127.0.0.109", {"*": Reply(200, json.dumps({"doi": "10.1000/b", "oa_locations": [
            {"url_for_pdf": publisher.base_url + "/b.pdf"}]}), {"Content-Type": "application/json"})})
        with retriever(tmp_path, {"unpaywall": service.base_url}, sources=["unpaywall"], respect_robots_txt=False) as r:
            out = r.download(["10.1000/b"])
    assert out.loc[0, "status"] in statuses and out.loc[0, "error"], out.loc[0, "error"]
    assert [p.name for p in tmp_path.iterdir()] == [".paperfetch-ledger.sqlite3"]


def test_a_302_without_location_and_a_charset_lie_end_in_clear_rows(hosts, tmp_path):
    publisher = hosts("127.0.0.103", {"/noloc.pdf": Reply(302, b"", {}), "*": Reply(404, b"")})
    service = hosts("127.0.0.102", {
        "/v2/10.1000%2Fnoloc": Reply(200, json.dumps({"doi": "10.1000/noloc", "oa_locations": [
            {"url_for_pdf": publisher.base_url + "/noloc.pdf"}]}), {"Content-Type": "application/json"}),
        # a charset lie: declared latin-1, sent as UTF-16 with invalid bytes
        "/v2/10.1000%2Fcharset": Reply(200, b"\xff\xfe{\x00\xd8\x00", {"Content-Type": "application/json; charset=latin-1"}),
        "*": Reply(404, b"{}"),
    })
    with retriever(tmp_path, {"unpaywall": service.base_url}, sources=["unpaywall"], respect_robots_txt=False) as r:
        out = r.download(["10.1000/noloc", "10.1000/charset"]).set_index("input")
    assert out.loc["10.1000/noloc", "status"] == "http_error" and "302" in out.loc["10.1000/noloc", "error"]
    assert out.loc["10.1000/charset", "status"] == "http_error"
    assert "unpaywall: the answer is not valid JSON" in out.loc["10.1000/charset", "error"]


def test_absurd_retry_after_is_held_until_the_cap_and_domain_status_works(hosts, tmp_path):
    service = hosts("127.0.0.104", {"*": Reply(429, b"", {"Retry-After": "99999999999999999999"})})
    with retriever(tmp_path, {"unpaywall": service.base_url}, sources=["unpaywall"], respect_robots_txt=False) as r:
        out = r.download(["10.1000/held", "10.1000/held2"])
        status = r.domain_status()
    assert list(out["status"]) == ["host_held", "host_held"]
    assert len(status) >= 1


# ------------------------------------------------------------------ redirects to internal addresses

PUBLIC = "93.184.216.34"


def _resolver(table):
    def resolve(host, *args):  # noqa: ANN001
        return [(2, 1, 6, "", (table[host], 0))] if host in table else []

    return resolve


@pytest.mark.parametrize("target", ["169.254.169.254", "10.0.0.1", "0.0.0.0", "[fd00:ec2::254]", "127.0.0.1",
                                    "[::ffff:10.0.0.1]", "internal.example", "192.168.1.1"])
def test_a_redirect_from_public_to_private_is_refused(target):
    resolve = _resolver({"publisher.example": PUBLIC, "internal.example": "10.1.2.3"})
    assert redirect_refusal("https://publisher.example/a", f"http://{target}/latest/meta-data", resolver=resolve) is not None
    never = target in ("169.254.169.254", "[fd00:ec2::254]")  # link-local / metadata: refused from any origin
    assert (redirect_refusal("https://publisher.example/a", f"http://{target}/x", allow_private=True, resolver=resolve)
            is not None) is never
    assert (redirect_refusal("http://127.0.0.5/a", f"http://{target}/x", resolver=resolve)
            is not None) is never  # started on loopback


def test_a_redirect_between_public_addresses_is_followed():
    resolve = _resolver({"publisher.example": PUBLIC, "cdn.example": "151.101.1.1"})
    assert redirect_refusal("https://publisher.example/a", "https://cdn.example/a.pdf", resolver=resolve) is None
    assert redirect_refusal("https://publisher.example/a", "https://unresolvable.example/", resolver=resolve) is None


@pytest.mark.parametrize("target", [
    "100.64.0.1", "100.127.255.254",  # carrier-grade NAT
    "127.1", "2130706433", "0x7f000001", "0x7f.0.0.1", "0177.0.0.1", "0", "127.0.0.1.",  # loopback, shorthand forms
    "localhost", "api.localhost", "LOCALHOST.",  # RFC 6761 names: loopback, whatever a resolver says
    "[2002:a00:1::]", "[64:ff9b::a00:1]", "[64:ff9b::7f00:1]",  # 6to4 and NAT64 forms of 10.0.0.1 and 127.0.0.1
    "172.16.0.1", "172.31.255.255", "192.168.0.1", "10.255.255.255", "[::1]", "[::]", "[fc00::1]", "[fd12:3456::1]",
    "intranet.example",  # a name with a private address
])
def test_every_private_network_form_is_refused_from_a_public_origin(target):
    resolve = _resolver({"publisher.example": PUBLIC, "intranet.example": "192.168.7.7"})
    why = redirect_refusal("https://publisher.example/a", f"http://{target}/x", resolver=resolve)
    assert why is not None and "from a public address" in why
    assert redirect_refusal("https://publisher.example/a", f"http://{target}/x", allow_private=True,
                            resolver=resolve) is None
    assert redirect_refusal("http://127.0.0.5/a", f"http://{target}/x", resolver=resolve) is None  # loopback origin


def _resolver_of(table):
    def resolve(host, *args):  # noqa: ANN001
        return [(2, 1, 6, "", (address, 0)) for address in table.get(host, [])]

    return resolve


def test_an_origin_with_any_public_address_is_public():
    """A name that resolves to a public and a private address does not make its redirects private ones."""
    resolve = _resolver_of({"rebind.example": [PUBLIC, "10.0.0.7"], "inside.example": ["10.0.0.8"]})
    assert redirect_refusal("https://rebind.example/a", "http://inside.example/x", resolver=resolve) is not None
    assert redirect_refusal("https://rebind.example/a", "http://10.0.0.1/x", resolver=resolve) is not None
    assert redirect_refusal("https://rebind.example/a", "https://151.101.1.1/x", resolver=resolve) is None
    # a public answer among private ones in the target is refused too
    resolve = _resolver_of({"publisher.example": [PUBLIC], "two.example": ["151.101.1.1", "127.0.0.1"]})
    assert redirect_refusal("https://publisher.example/a", "http://two.example/x", resolver=resolve) is not None


def test_a_private_origin_reaches_private_networks_but_not_this_machine():
    resolve = _resolver_of({"intranet.example": ["10.0.0.5"], "cgnat.example": ["100.64.1.1"]})
    for origin in ("http://intranet.example/a", "http://192.168.1.10/a", "http://[fd00::5]/a", "http://cgnat.example/a"):
        for target in ("10.0.0.9", "172.16.4.4", "192.168.1.11", "[fd00::6]", "100.64.2.2", "151.101.1.1"):
            assert redirect_refusal(origin, f"http://{target}/x", resolver=resolve) is None, (origin, target)
        for target in ("127.0.0.1", "127.1", "localhost", "[::1]", "0.0.0.0", "[::]"):
            why = redirect_refusal(origin, f"http://{target}/x", resolver=resolve)
            assert why is not None and "from a private address" in why, (origin, target)
            assert redirect_refusal(origin, f"http://{target}/x", allow_private=True, resolver=resolve) is None
        assert "link-local" in (redirect_refusal(origin, "http://169.254.169.254/", resolver=resolve) or "")


def test_a_nat64_address_is_judged_by_the_address_it_embeds():
    """On an IPv6-only network with DNS64 every public server has a 64:ff9b:: address: it stays public."""
    resolve = _resolver_of({"publisher.example": ["64:ff9b::5db8:d822"], "cdn.example": ["64:ff9b::9765:101"]})
    assert redirect_refusal("https://publisher.example/a", "https://cdn.example/a.pdf", resolver=resolve) is None
    assert redirect_refusal("https://publisher.example/a", "http://[64:ff9b::a00:1]/", resolver=resolve) is not None
    assert "link-local" in (redirect_refusal("https://publisher.example/a", "http://[64:ff9b::a9fe:a9fe]/",
                                             resolver=resolve) or "")


def test_the_transport_refuses_the_redirect_and_the_row_says_why(hosts, tmp_path, monkeypatch):
    import paperfetch.http.redirects as redirects_module

    publisher = hosts("127.0.0.105", {"/a.pdf": Reply(302, b"", {"Location": "http://169.254.169.254/latest/"})})
    service = hosts("127.0.0.106", {"*": Reply(200, json.dumps({"doi": "10.1000/r", "oa_locations": [
        {"url_for_pdf": publisher.base_url + "/a.pdf"}]}), {"Content-Type": "application/json"})})

    def as_if_public(from_url, to_url, allow_private):  # the publisher plays a public address
        return addresses.redirect_refusal(from_url.replace("127.0.0.105", PUBLIC), to_url, allow_private)

    monkeypatch.setattr(redirects_module, "redirect_refusal", as_if_public)
    with retriever(tmp_path, {"unpaywall": service.base_url}, sources=["unpaywall"], respect_robots_txt=False) as r:
        out = r.download(["10.1000/r"])
    assert out.loc[0, "status"] == "http_error"
    assert "169.254.169.254" in out.loc[0, "error"] and "link-local" in out.loc[0, "error"]
    c = HttpClient(respect_robots_txt=False, max_retries=0)
    with pytest.raises(RefusedRedirect):
        c.fetch(publisher.base_url + "/a.pdf")


def test_a_redirect_from_a_private_origin_to_this_machine_is_an_http_error_row(hosts, tmp_path, monkeypatch):
    import paperfetch.http.redirects as redirects_module

    inside = hosts("127.0.0.117", {"*": Reply(200, b"%PDF-1.4 local", {"Content-Type": "application/pdf"})})
    intranet = hosts("127.0.0.118", {"/a.pdf": Reply(302, b"", {"Location": inside.base_url + "/admin.pdf"})})
    service = hosts("127.0.0.119", {"*": Reply(200, json.dumps({"doi": "10.1000/p", "oa_locations": [
        {"url_for_pdf": intranet.base_url + "/a.pdf"}]}), {"Content-Type": "application/json"})})

    def as_if_intranet(from_url, to_url, allow_private):  # the server plays a private (10/8) address
        return addresses.redirect_refusal(from_url.replace("127.0.0.118", "10.0.0.5"), to_url, allow_private)

    monkeypatch.setattr(redirects_module, "redirect_refusal", as_if_intranet)
    with retriever(tmp_path, {"unpaywall": service.base_url}, sources=["unpaywall"], respect_robots_txt=False) as r:
        out = r.download(["10.1000/p"])
    assert out.loc[0, "status"] == "http_error"
    assert "127.0.0.117" in out.loc[0, "error"] and "from a private address" in out.loc[0, "error"]
    assert inside.hits() == 0  # this machine's server was never asked


def test_read_limited_caps_decoded_bytes_and_can_truncate(hosts):
    big = hosts("127.0.0.107", {"/big": Reply(200, b"x" * 300_000)})
    response = requests.get(big.base_url + "/big", stream=True, timeout=10)
    with pytest.raises(DownloadTooLarge, match="decoded"):
        read_limited(response, max_bytes=100_000)
    response = requests.get(big.base_url + "/big", stream=True, timeout=10)
    assert len(read_limited(response, max_bytes=1000, truncate=True, deadline=Deadline(10))) == 1000


# ------------------------------------------------------------------ 6. the property test

TOTAL_INPUTS = []

INPUTS = st.one_of(
    st.text(max_size=30),
    st.text(alphabet="0123456789./abcxyzPMC:", max_size=20),
    st.builds(lambda s: "10.1234/" + s, st.text(max_size=12)),
    st.binary(max_size=20),
    st.integers(min_value=-10**12, max_value=10**12),
    st.floats(),
    st.none(),
    st.sampled_from([float("nan"), Decimal("sNaN"), object(), "10.1000/\ud800", "\udfff",
                     "x" * 1_000_000, "10.1000/" + "y" * 1_000_000, "PMID:12345", "PMC123", "arXiv:2101.00001"]),
)


@pytest.mark.slow
def test_download_returns_one_row_per_input_whatever_the_servers_answer(tmp_path):
    answers: list = [None]
    counter = {"n": 0}
    TOTAL_INPUTS.clear()

    def answer(request):
        counter["n"] += 1
        value = answers[counter["n"] % len(answers)]
        try:
            body = json.dumps(value).encode("utf-8", "surrogatepass")
        except (TypeError, ValueError):
            body = b"{"
        return Reply(200 if counter["n"] % 7 else 404, body, {"Content-Type": "application/json"})

    with LoopbackHost("127.0.0.108", {"*": answer}) as service:
        endpoints = {k: service.base_url for k in ("openalex", "unpaywall", "crossref", "europepmc", "ncbi_idconv",
                                                   "ncbi_eutils", "doi")}
        r = retriever(tmp_path, endpoints, respect_robots_txt=False, resume=False,
                      sources=["openalex", "unpaywall", "crossref", "landing"],
                      http_options={"host_intervals": {host_key(service.base_url): 0.0}, "rate_limit_min_s": 0.0,
                                    "rate_limit_max_s": 0.0, "request_deadline_s": 10.0})

        @settings(max_examples=int(os.environ.get("PAPERFETCH_PROPERTY_EXAMPLES", "100")), deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
        @given(inputs=st.lists(INPUTS, min_size=100, max_size=160), shapes=st.lists(JSON, min_size=1, max_size=8))
        def run(inputs, shapes):
            answers[:] = shapes
            inputs = inputs + [_Raising()]  # Hypothesis cannot show an object whose repr raises: added here
            out = r.download(inputs)
            assert len(out) == len(inputs)
            assert out["status"].notna().all()
            TOTAL_INPUTS.append(len(inputs))

        started = time.monotonic()
        try:
            run()
        finally:
            r.close()
        took = time.monotonic() - started
    print(f"property test: {sum(TOTAL_INPUTS)} inputs in {len(TOTAL_INPUTS)} download() calls, "
          f"{counter['n']} answers of random shape, {took:.1f} s")
    assert counter["n"] > 100  # the services were asked, and answered junk
    if "PAPERFETCH_PROPERTY_EXAMPLES" not in os.environ:
        assert sum(TOTAL_INPUTS) >= 10_000


@pytest.mark.timeout(30)  # a real socket trickle: bounded whatever the deadline does
def test_a_head_trickling_one_byte_per_second_ends_at_the_deadline():
    def handler(conn, request, stopping):  # noqa: ANN001
        for byte in b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 1000 + b"\r\n\r\n":
            if stopping.wait(0.5):
                return
            conn.sendall(bytes([byte]))

    with RawServer("127.0.0.110", handler) as server:
        c = HttpClient(respect_robots_txt=False, max_retries=0, request_deadline_s=1.0)
        with pytest.raises(DeadlineExceeded):
            c.fetch(f"{server.base_url}/x")


def test_a_deadline_counts_in_the_injected_clock():
    from paperfetch.clock import FakeClock

    clock = FakeClock()
    deadline = Deadline(5.0, clock=clock)
    assert deadline.remaining() == 5.0 and not deadline.expired()
    clock.advance(5.0)
    with pytest.raises(DeadlineExceeded, match="deadline of 5 s"):
        deadline.check("http://h/x")


# ------------------------------------------------------------------ ceilings everywhere: polite_mode=False, robots.txt, the breaker

def _as_if_public(address):
    """A redirect_refusal for which the loopback *address* plays a public server."""
    def refusal(from_url, to_url, allow_private):  # noqa: ANN001
        return addresses.redirect_refusal(from_url.replace(address, PUBLIC), to_url, allow_private)

    return refusal


@pytest.mark.timeout(30)  # a real socket trickle: bounded whatever the deadline does
def test_polite_mode_false_keeps_the_deadline_the_cap_and_the_redirect_check(hosts, monkeypatch):
    import paperfetch.http.redirects as redirects_module

    with RawServer("127.0.0.111", trickle(b'{"a": 1}' * 50, 0.5, content_type="application/json")) as slow:
        c = HttpClient(polite_mode=False, max_retries=0, request_deadline_s=1.5)
        with pytest.raises(DeadlineExceeded, match="deadline of 1.5 s"):
            c.fetch(f"{slow.base_url}/x")
    site = hosts("127.0.0.112", {"/big": Reply(200, b"x" * 300_000), "/hop": Reply(302, b"", {"Location": "/big"}),
                                 "/meta": Reply(302, b"", {"Location": "http://169.254.169.254/latest/"})})
    c = HttpClient(polite_mode=False, max_retries=0, max_answer_bytes=100_000)
    with pytest.raises(DownloadTooLarge, match="decoded"):
        c.fetch(site.base_url + "/big")
    followed = HttpClient(polite_mode=False).get(site.base_url + "/hop")  # followed here, hop by hop
    assert followed.status_code == 200 and len(followed.content) == 300_000
    assert [r.status_code for r in followed.history] == [302]
    monkeypatch.setattr(redirects_module, "redirect_refusal", _as_if_public("127.0.0.112"))
    with pytest.raises(RefusedRedirect, match="169.254.169.254"):
        c.get(site.base_url + "/meta")
    assert site.hits("/meta") == 1


def test_a_robots_txt_redirect_from_public_to_private_is_refused(hosts, monkeypatch):
    import paperfetch.http.redirects as redirects_module

    inside = hosts("127.0.0.113", {"*": Reply(200, b"User-agent: *\nDisallow: /\n", {"Content-Type": "text/plain"})})
    publisher = hosts("127.0.0.114", {"/robots.txt": Reply(302, b"", {"Location": inside.base_url + "/robots.txt"}),
                                      "*": Reply(200, b"{}", {"Content-Type": "application/json"})})
    monkeypatch.setattr(redirects_module, "redirect_refusal", _as_if_public("127.0.0.114"))
    c = HttpClient(respect_robots_txt=True, max_retries=0, **FAST)
    assert c.fetch(publisher.base_url + "/x").content == b"{}"  # robots.txt unreachable: allowed, as configured
    assert inside.hits() == 0  # the private address was never asked
    assert c.snapshot(publisher.base_url).robots == "unreachable"


@pytest.mark.timeout(30)  # a real socket trickle: bounded whatever the deadline does
def test_the_breaker_counts_a_deadline_as_a_failure(tmp_path):
    def slow_head(conn, request, stopping):  # noqa: ANN001
        for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100:
            if stopping.wait(0.2):
                return
            conn.sendall(bytes([byte]))

    with RawServer("127.0.0.115", slow_head) as server:  # the head trickles past the deadline
        c = HttpClient(respect_robots_txt=False, max_retries=0, request_deadline_s=0.6, breaker_failures=2,
                       backoff_base_s=0.05, **FAST)
        for _ in range(2):
            with pytest.raises(DeadlineExceeded):
                c.fetch(server.base_url + "/x")
        snap = c.snapshot(server.base_url)
        assert (snap.failures, snap.breaker) == (2, "open")
        assert "DeadlineExceeded" in c.host_limiter(server.base_url).facts.breaker_reason
    with RawServer("127.0.0.116", trickle(fake_pdf("slow"), 0.2)) as server:  # the head is quick, the body trickles
        c = HttpClient(respect_robots_txt=False, max_retries=0, request_deadline_s=0.6, breaker_failures=1, **FAST)
        with pytest.raises(DeadlineExceeded):
            c.download(server.base_url + "/slow.pdf", tmp_path / "slow.pdf")
        snap = c.snapshot(server.base_url)
        assert (snap.failures, snap.breaker) == (1, "open")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ references / citations read defensively too

class _Answers:
    """A Fetcher answering every request with the next body of *bodies* (cycling)."""

    def __init__(self, bodies):  # noqa: ANN001
        self.bodies = list(bodies)
        self.n = 0

    def fetch(self, url, classify=None, params=None):  # noqa: ANN001
        body = self.bodies[self.n % len(self.bodies)]
        self.n += 1
        return type("Answer", (), {"content": body})()


@pytest.mark.parametrize("body", UNREADABLE[:7])
def test_an_unreadable_references_answer_is_a_malformed_response(body):
    from paperfetch.sources.crossref import CrossrefSource
    from paperfetch.sources.openalex import OpenAlexSource
    from paperfetch.sources.references import LinkFinder

    finder = LinkFinder(openalex=OpenAlexSource(), crossref=CrossrefSource())
    with pytest.raises(MalformedResponse, match="^openalex: "):
        finder.references(_Answers([body]), parse_identifier("10.1000/x"))
    with pytest.raises(MalformedResponse, match="^openalex: "):
        finder.citations(_Answers([body]), parse_identifier("10.1000/x"))


def test_wrong_shaped_reference_fields_are_absent():
    from paperfetch.sources.crossref import CrossrefSource
    from paperfetch.sources.openalex import OpenAlexSource
    from paperfetch.sources.references import LinkFinder

    work = {"id": "https://openalex.org/W1", "doi": 7, "referenced_works": ["W2", None, 3, {"x": 1}]}
    page = {"results": [None, "junk", {"id": ["W9"], "doi": "https://doi.org/10.1/A", "publication_year": "abc",
                                       "ids": {"pmid": 12}, "title": ["t"]}], "meta": {"next_cursor": 5}}
    crossref = {"message": {"reference": [None, {"DOI": 3}, {"DOI": "10.2/B", "year": "19x9", "article-title": 1}]}}
    finder = LinkFinder(openalex=OpenAlexSource(), crossref=CrossrefSource())
    links = finder.references(_Answers([json.dumps(work), json.dumps(page), json.dumps(crossref)]),
                              parse_identifier("10.1000/x"))
    assert [(link.doi, link.year, link.pmid, link.title) for link in links] == [
        ("10.1/a", None, None, None), ("10.2/b", None, None, None)]


def test_a_pdf_another_process_finished_just_before_this_run_is_kept_when_the_ledger_vouches_for_it(tmp_path):
    """The race behind an overlapping batch fetching a PDF twice: the other process renamed the file before
    this run began, and recorded it after this run had read the ledger."""
    from paperfetch.http.files import file_digest

    dest = tmp_path / "doi_10.1000_x.pdf"
    dest.write_bytes(fake_pdf("x"))
    key = parse_identifier("10.1000/x").key
    with retriever(tmp_path, {}) as r, SqliteLedger.in_folder(tmp_path) as ledger:
        r._batch.run_started = time.time() + 60  # the file predates the run (paperfetch.flow.BatchRun)
        r._batch.ledger = ledger
        assert not r._batch.reusable(key, dest, False, resume=r.settings.resume)  # nobody vouches for it: fetched again
        assert r._batch.reusable(key, dest, True, resume=r.settings.resume)  # we waited for its writer
        size, digest = file_digest(dest)
        ledger.record(key, status="downloaded", path=dest, bytes=size, sha256=digest)
        assert r._batch.reusable(key, dest, False, resume=r.settings.resume)  # the other process has recorded it by now
        r.configure(resume=False)
        assert not r._batch.reusable(key, dest, False, resume=r.settings.resume)  # resume=False: only what was written during this run
        r.configure(resume=True)
        with open(dest, "ab") as handle:
            handle.write(b"tampered")
        assert not r._batch.reusable(key, dest, False, resume=r.settings.resume)  # not the file the ledger knows


@pytest.mark.timeout(60)  # a real socket trickle: bounded whatever the batch does
def test_a_trickling_pdf_host_costs_a_batch_about_one_window_and_counts_on_its_breaker(hosts, tmp_path):
    import json as _json
    from urllib.parse import parse_qs

    dois = [f"10.5555/trickle.{n}" for n in range(3)]
    with RawServer("127.0.0.117", trickle(fake_pdf("slow"), 0.01)) as pdfs:  # 100 bytes/s, under 1000

        def works(request):  # noqa: ANN001
            wanted = parse_qs(request.query).get("filter", [""])[0].removeprefix("doi:").split("|")
            results = [{"id": "https://openalex.org/W0", "doi": f"https://doi.org/{d}", "title": d,
                        "display_name": d, "publication_year": 2020, "ids": {"doi": f"https://doi.org/{d}"},
                        "open_access": {"is_oa": True, "oa_status": "gold", "oa_url": None},
                        "best_oa_location": {"is_oa": True, "pdf_url": pdfs.base_url + f"/{d[-1]}.pdf",
                                             "landing_page_url": None, "license": "cc-by"},
                        "locations": []} for d in wanted if d.lower() in dois]
            return Reply(200, _json.dumps({"meta": {"count": len(results)}, "results": results}).encode(),
                         {"Content-Type": "application/json"})

        service = hosts("127.0.0.118", {"*": works})
        with retriever(tmp_path, {"openalex": service.base_url}, sources=("openalex",), respect_robots_txt=False,
                       max_retries=3, http_options={"min_rate_bytes_s": 1000, "min_rate_window_s": 1.0}) as r:
            out = r.download(dois)
            status = r.domain_status()
    assert sorted(out["status"]) == ["host_held", "host_held", "network_error"]  # every one retried by a re-run
    assert "under the minimum of 1000 bytes/s" in out["error"].iloc[0] and (out["attempts"] <= 1).all()
    row = status[status["host"].str.startswith("127.0.0.117")].iloc[0]
    assert row["breaker"] == "open" and row["failures"] >= 1  # the trickle counted on the host's breaker
    assert len(pdfs.requests) == 1  # one window for the batch: not a window per attempt, nor per paper
