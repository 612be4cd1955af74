"""Which copy of a paper goes to which host — the rule on tables, the transport's outlooks on a fake
clock, the scheduler moving queued papers, and one loopback batch moving papers off a held host."""

from __future__ import annotations

import math
import random
from collections import deque
from contextlib import nullcontext
from pathlib import Path

import pytest
import requests

from paperfetch import FakeClock, HttpClient
from paperfetch.flow import Means, PaperJob
from paperfetch.flow import Outlook as FlowOutlook
from paperfetch.http.assign import Outlook, Placement, Prefer, copy_tier, earliest, revise
from paperfetch.http.context import answer_now
from paperfetch.http.hosts import HostRegistry, host_key
from paperfetch.http.scheduler import HostScheduler
from paperfetch.ids import parse_identifier
from paperfetch.paper import Paper
from paperfetch.sources import Candidate, Record
from paperfetch.testing import LoopbackHost, Reply, scripted_session

A, B, C = "https://a.example", "https://b.example", "https://c.example"


# ---------------------------------------------------------------------- the rule, as tables
def test_ties_go_to_the_copy_the_paper_lists_first():
    idle = {"a": Outlook(0.0, 1.0), "b": Outlook(0.0, 1.0)}
    assert earliest(["a", "b"], idle, {}) == 0
    assert earliest(["b", "a"], idle, {}) == 0
    assert earliest(["a", "b"], idle, {"a": 1}) == 1  # a's queue reaches a new paper 1 s later


@pytest.mark.parametrize(
    "outlooks, loads, expected",
    [
        ({"a": Outlook(0.0, 0.5), "b": Outlook(0.0, 0.1)}, {"a": 3, "b": 10}, 1),   # 1.0 s before 1.5 s
        ({"a": Outlook(0.0, 0.5), "b": Outlook(0.0, 0.1)}, {"a": 1, "b": 10}, 0),   # 0.5 s before 1.0 s
        ({"a": Outlook(30.0, 0.1), "b": Outlook(0.0, 0.5)}, {"a": 0, "b": 20}, 1),  # a held 30 s
        ({"a": Outlook(math.inf, 0.1), "b": Outlook(0.0, 0.5)}, {"a": 0, "b": 500}, 1),  # a suppressed
    ],
)
def test_a_paper_goes_to_the_copy_whose_queue_reaches_it_soonest(outlooks, loads, expected):
    assert earliest(["a", "b"], outlooks, loads) == expected


def test_version_tiers_published_then_accepted_then_unknown_then_preprint():
    tiers = [copy_tier(v) for v in ("publishedVersion", "acceptedVersion", None, "odd", "submittedVersion")]
    assert tiers == [0, 1, 2, 2, 3]
    assert {copy_tier(v, "speed") for v in ("publishedVersion", None, "submittedVersion")} == {0}
    with pytest.raises(ValueError, match="choose from version, speed"):
        Prefer.parse("fastest")


def _queues(**hosts):
    """host key -> [(token, copies)], each token a paper name, its copies given as host keys."""
    return {k: [(name, [(h, f"https://{h}/{name}") for h in copies] if copies else None) for name, copies in entries]
            for k, entries in hosts.items()}


def test_revise_moves_the_tail_of_a_piled_queue_and_leaves_single_copy_papers_in_place():
    queues = _queues(a=[(f"p{i}", ["a", "b"]) for i in range(10)] + [("only-a", None)], b=[])
    moves = revise(queues, {"a": Outlook(0.0, 0.5), "b": Outlook(0.0, 0.5)})
    moved = {m.token for m in moves}
    assert "only-a" not in moved and all(m.target == "b" for m in moves)
    assert 4 <= len(moves) <= 6  # about half the papers change host
    assert all(m.url == f"https://b/{m.token}" for m in moves)


def test_revise_does_not_move_for_less_than_an_interval():
    queues = _queues(a=[("p0", ["a", "b"]), ("p1", ["a", "b"])], b=[("q0", None)])
    assert revise(queues, {"a": Outlook(0.0, 1.0), "b": Outlook(0.0, 1.0)}) == []


def test_no_starvation_a_paper_whose_only_copy_is_on_a_slow_host_only_moves_forward():
    # the slow host's queue: flexible papers before and after the single-copy one
    queue = [(f"f{i}", ["slow", "fast"]) for i in range(5)] + [("stuck", None)] + [(f"g{i}", ["slow", "fast"]) for i in range(5)]
    queues = _queues(slow=queue, fast=[])
    outlooks = {"slow": Outlook(0.0, 2.0), "fast": Outlook(0.0, 0.1)}
    moves = revise(queues, outlooks)
    moved = {m.token for m in moves}
    kept = [name for name, _ in queues["slow"] if name not in moved]
    assert kept.index("stuck") < 6 and "stuck" not in moved  # it moved forward (papers ahead of it left)
    assert kept == ["f0", "stuck"]  # the head is served at once: nothing to gain by moving it


# ---------------------------------------------------------------------- the transport's outlooks, fake clock
def _client(routes, **kwargs):
    clock = FakeClock()
    session, adapter = scripted_session(routes, clock)
    kwargs.setdefault("host_intervals", {"a.example": 1.0, "b.example": 1.0, "c.example": 1.0})
    c = HttpClient(session=session, clock=clock, registry=HostRegistry(clock), rng=random.Random(7), pacing_margin_s=0.0,
                   max_retries=0, **kwargs)
    return c, adapter, clock


def _revised(client, clock, queue_a):
    """Revise a queue of papers on a (copies a, b) against the client's outlooks now."""
    placement = Placement(client, since=clock.time(), max_host_wait_s=120)
    jobs = deque((name, f"{A}/{name}") for name in queue_a)
    for name in queue_a:
        placement.movable[id(name)] = ((host_key(A), f"{A}/{name}"), (host_key(B), f"{B}/{name}"))
    moved = placement.revise({host_key(A): jobs, host_key(B): deque()}, {host_key(A): A, host_key(B): B},
                             clock.monotonic(), 0)
    return [name for name, _, _ in moved], [name for name, _ in jobs]


def test_a_hold_empties_the_queue_onto_the_other_copies():
    client, _, clock = _client({f"{A}/x": Reply(503, headers={"Retry-After": "30"})})
    client.get(f"{A}/x")
    assert client.snapshot(A).ready_in_s == pytest.approx(30.0)
    moved, left = _revised(client, clock, ["p0", "p1", "p2"])
    assert moved == ["p0", "p1", "p2"] and left == []


def test_a_429_raises_the_interval_and_the_tail_moves():
    client, _, clock = _client({f"{A}/0": Reply(200), f"{A}/1": Reply(429, headers={"Retry-After": "5"})})
    papers = [f"p{i}" for i in range(6)]
    client.get(f"{A}/0")
    clock.sleep(1.0)
    moved_before, _ = _revised(client, clock, papers)
    client.get(f"{A}/1")
    assert client.snapshot(A).learned_interval_s == pytest.approx(6.0)  # the refused gap (1 s) plus the wait
    moved_after, left = _revised(client, clock, papers)
    assert len(moved_after) > len(moved_before) and left[0] == "p0"


def test_an_open_breaker_empties_the_queue():
    def refused(_request):
        raise requests.ConnectionError("NewConnectionError: [Errno 111] Connection refused")

    client, _, clock = _client({f"{A}/x": refused})
    for _ in range(3):
        with pytest.raises(requests.ConnectionError):
            client.get(f"{A}/x")
    assert client.snapshot(A).breaker == "open"  # unreachable: the batch does not wait for it
    moved, left = _revised(client, clock, ["p0", "p1"])
    assert moved == ["p0", "p1"] and left == []


def test_a_short_open_period_moves_only_what_it_delays_by_more_than_an_interval():
    client, _, clock = _client({f"{A}/x": Reply(503)}, host_intervals={"a.example": 1.0, "b.example": 5.0})
    for _ in range(3):
        client.get(f"{A}/x")  # the transport waits out the pacing gap and the backoff on the fake clock
    snap = client.snapshot(A)
    assert snap.breaker == "open" and snap.ready_in_s == pytest.approx(4.0)
    moved, left = _revised(client, clock, ["p0", "p1", "p2"])
    # p2 (at 12 s) starts on b at once; p1 (at 8 s) would start there at 5 s, within b's 5 s interval: it stays
    assert left == ["p0", "p1"] and moved == ["p2"]


def test_a_suppressed_host_keeps_none_of_its_movable_papers():
    client, _, clock = _client({f"{A}/x": Reply(403)})
    client.get(f"{A}/x")
    assert client.snapshot(A).suppressed
    moved, left = _revised(client, clock, ["p0", "p1", "p2", "p3"])
    assert moved == ["p0", "p1", "p2", "p3"] and left == []


# ---------------------------------------------------------------------- the scheduler, fake clock
class CopyJob:
    """A paper with copies: one request; the scheduler picks which copy (``choose``)."""

    def __init__(self, client, urls):
        self.client, self._copies, self.done, self.served = client, list(urls), False, None

    @property
    def url(self):
        return None if self.done else self._copies[0]

    @property
    def copies(self):
        return () if self.done else tuple(self._copies)

    def choose(self, url):
        self._copies.remove(url)
        self._copies.insert(0, url)

    def advance(self):
        url = self._copies.pop(0)
        with answer_now() if self._copies else nullcontext():  # another copy left: wait for no hold (as PaperJob)
            response = self.client.get(url)
        if response is not None and response.status_code == 200:
            self.done, self.served = True, url
        elif not self._copies:
            self.done = True


def test_the_scheduler_spreads_papers_over_their_copies_by_each_hosts_pace():
    routes = {f"{h}/{i}": Reply(200) for h in (A, B, C) for i in range(30)}
    client, adapter, clock = _client(routes, host_intervals={"a.example": 1.0, "b.example": 0.5, "c.example": 2.0})
    jobs = [CopyJob(client, [f"{A}/{i}", f"{B}/{i}", f"{C}/{i}"]) for i in range(28)]
    jobs += [CopyJob(client, [f"{C}/only{i}"]) for i in range(2)]
    adapter.routes.update({f"{C}/only{i}": Reply(200) for i in range(2)})
    start = clock.monotonic()
    scheduler = HostScheduler(client)
    scheduler.run(jobs)
    assert all(j.served for j in jobs)
    assert len(adapter.calls) == 30  # every paper exactly once
    served = [j.served.split("/")[2] for j in jobs]
    # fixed order: 28 papers on a (28 s); the rule: about 1 : 2 : 0.5 (+2 only on c), done in ~9 s
    assert served.count("b.example") > served.count("a.example") > 0
    assert clock.monotonic() - start < 12.0
    assert scheduler.stats["moves"] >= 0  # placed well at once: the intervals are known up front


class StepJob:
    """A paper whose next request is on host A until A is held, then its page on B (``decide_again``, as PaperJob)."""

    def __init__(self, client, n):
        self.client, self.n, self.url, self.served = client, n, f"{A}/p/{n}", None

    def decide_again(self):
        if self.url is not None and self.client.hold_remaining(A) > 0:
            self.url = f"{B}/a/{self.n}"

    def advance(self):
        self.decide_again()
        with answer_now():  # another step left: wait for no hold
            response = self.client.get(self.url)
        if response is not None and response.status_code == 200:
            self.url, self.served = None, self.url


def test_papers_queued_for_a_host_that_becomes_held_decide_again_and_go_elsewhere_at_once():
    routes = {f"{A}/p/{n}": Reply(503, headers={"Retry-After": "30"}) for n in range(6)}
    routes.update({f"{B}/a/{n}": Reply(200) for n in range(6)})
    client, adapter, clock = _client(routes)
    jobs = [StepJob(client, n) for n in range(6)]
    start = clock.monotonic()
    HostScheduler(client).run(jobs)
    assert [j.served for j in jobs] == [f"{B}/a/{n}" for n in range(6)]
    assert sum(1 for _, url in adapter.calls if url.startswith(A)) == 1  # one 503; the rest never asked A
    assert clock.monotonic() - start < 30.0  # on the fake clock: B's pace, not A's 30 s hold


def test_a_papers_step_offers_only_its_best_version_tier_and_choose_moves_a_copy_first():
    doi = "10.5555/x.1"
    cands = [Candidate(f"{A}/pre.pdf", "openalex", version="submittedVersion"),
             Candidate(f"{B}/pub.pdf", "openalex", version="publishedVersion"),
             Candidate(f"{C}/pub.pdf", "openalex", version="publishedVersion"),
             Candidate(f"{C}/page", "openalex", kind="landing")]

    class Prefetched:
        stage = "prefetched"

    def job(prefer):
        outlook = FlowOutlook(sources={"openalex": Prefetched()},  # type: ignore[dict-item]
                          prefetched={("openalex", doi): Record(doi=doi, candidates=cands)}, prefer=prefer)
        means = Means(api=None, web=None, sources=outlook.sources, out_dir=Path("."), filename_template="{key}.pdf")
        return PaperJob(Paper.start(parse_identifier(doi), ["openalex"]), outlook, means)

    by_version = job("version")
    assert by_version.url == f"{B}/pub.pdf" and by_version.copies == (f"{B}/pub.pdf", f"{C}/pub.pdf")
    by_version.choose(f"{C}/pub.pdf")
    assert by_version.url == f"{C}/pub.pdf"
    assert by_version.outcome()["copies"] == 3
    fastest = job("speed")
    assert fastest.url == f"{A}/pre.pdf" and len(fastest.copies) == 3


# ---------------------------------------------------------------------- loopback: a paper moves off a held host
def test_papers_move_off_a_held_host_to_their_other_copies_on_loopback():
    pdf = Reply(200, b"%PDF-1.4\n%%EOF\n", {"Content-Type": "application/pdf"})
    with LoopbackHost("127.0.0.61", {"*": Reply(503, b"down", {"Retry-After": "30"})}) as held, \
            LoopbackHost("127.0.0.62", {"*": pdf}) as other:
        client = HttpClient(registry=HostRegistry(), verbosity=0, delay_min_s=0.05, delay_max_s=0.05)
        jobs = [CopyJob(client, [held.url(f"/p/{i}"), other.url(f"/p/{i}")]) for i in range(8)]
        HostScheduler(client).run(jobs)
    assert all(j.served and j.served.startswith(other.base_url) for j in jobs)
    assert held.hits() <= 2 and max(other.arrivals()) < held.arrivals()[0] + 30  # nobody waited out the 30 s hold


# ---------------------------------------------------------------------- a wait is not a pace (policy)
@pytest.mark.parametrize(
    "status, retry_after, gap_s, floor_s, expected",
    [
        (503, "30", 0.5, 0.5, 0.0),    # an outage on a 0.5 s host: a hold, then the normal pace
        (429, "30", 0.5, 0.5, 1.0),    # a 429 with a long wait: the refused gap was too short (twice it)
        (429, "1", 0.2, 0.2, 1.2),     # a wait of the host's order: the refused gap plus the wait, as before
        (503, "2", 0.5, 0.0, 2.5),
        (429, "5", 1.0, 1.0, 6.0),
    ],
)
def test_a_long_retry_after_is_a_hold_not_a_learned_interval(status, retry_after, gap_s, floor_s, expected):
    from paperfetch.http import policy
    from paperfetch.http.config import TransportConfig
    from paperfetch.state.base import HostFacts

    facts, _ = policy.observe_response(HostFacts(), TransportConfig(), status=status,
                                       headers={"Retry-After": retry_after}, now=1_700_000_000.0, gap_s=gap_s,
                                       floor_s=floor_s)
    assert facts.learned_interval_s == pytest.approx(expected)
    assert facts.hold_until == pytest.approx(1_700_000_000.0 + float(retry_after))


def test_after_a_long_hold_the_host_goes_at_its_normal_pace():
    routes = {f"{A}/0": Reply(200), f"{A}/1": Reply(503, headers={"Retry-After": "30"}),
              **{f"{A}/{i}": Reply(200) for i in range(2, 6)}}
    client, adapter, clock = _client(routes, host_intervals={"a.example": 0.5})
    for i in range(6):
        client.get(f"{A}/{i}")
    starts = [t for t, _ in adapter.calls]
    assert client.snapshot(A).learned_interval_s == 0.0
    assert starts[2] - starts[1] == pytest.approx(30.0)  # the hold
    # then the host's pace: the one 503's backoff (1 s, cleared by the next success), then 0.5 s, not 30 s
    assert [round(b - a, 3) for a, b in zip(starts[2:], starts[3:])] == [1.0, 0.5, 0.5]


def test_queued_counts_stay_exact_while_papers_move():
    routes = {f"{h}/{i}": Reply(200) for h in (A, B) for i in range(20)}
    client, _, _ = _client(routes, host_intervals={"a.example": 1.0, "b.example": 0.25})
    jobs = [CopyJob(client, [f"{A}/{i}", f"{B}/{i}"]) for i in range(20)]
    samples = []
    scheduler = HostScheduler(client, on_finished=lambda job: samples.append(sum(scheduler.queued().values())))
    scheduler.run(jobs)
    for finished, queued in enumerate(samples, 1):
        assert len(jobs) - finished - 2 <= queued <= len(jobs) - finished  # at most one in flight per host
    assert scheduler.queued() == {"a.example": 0, "b.example": 0}


def _papers(tmp_path, work, dois, address, void, **settings):
    """Download *dois* (``….N``) through an OpenAlex on *address* that answers a batched filter query with
    ``work(N)`` for each, every other service pointed at *void* (*settings*: more Retriever settings); returns
    the outcomes frame."""
    import json
    from urllib.parse import parse_qs

    from paperfetch import Retriever

    def openalex(request):
        wanted = parse_qs(request.query).get("filter", [""])[0].removeprefix("doi:").split("|")
        body = {"meta": {"count": len(wanted)}, "results": [work(int(d.rsplit(".", 1)[1])) for d in wanted if d]}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    with LoopbackHost(address, {"*": openalex}) as oa:
        endpoints = {name: void.base_url for name in ("unpaywall", "crossref", "europepmc", "doi")}
        with Retriever(email="t@uni.example", out_dir=tmp_path, sources=["openalex"], progress=False, verbosity=0,
                       cache=False, state="memory", endpoints={"openalex": oa.base_url, **endpoints},
                       delay_min_s=0.05, delay_max_s=0.05, **settings) as r:
            return r.download(dois)


def test_the_retriever_takes_each_paper_from_a_copy_off_the_held_host_and_says_so(tmp_path):
    from paperfetch import Retriever

    pdf = Reply(200, b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n" + b"0" * 900 + b"\n%%EOF\n",
                {"Content-Type": "application/pdf"})
    with LoopbackHost("127.0.0.63", {"*": Reply(503, b"down", {"Retry-After": "30"})}) as held, \
            LoopbackHost("127.0.0.64", {"*": pdf}) as good, LoopbackHost("127.0.0.65", {"*": Reply(404)}) as void:
        def work(n):
            locs = [{"is_oa": True, "pdf_url": h.url(f"/p/{n}.pdf"), "version": "publishedVersion",
                     "source": {"type": "journal"}} for h in (held, good)]
            return {"doi": f"https://doi.org/10.5555/copy.{n}", "title": f"Copy {n}", "best_oa_location": locs[0],
                    "locations": locs, "open_access": {"is_oa": True, "oa_url": locs[0]["pdf_url"]}}

        frame = _papers(tmp_path, work, [f"10.5555/copy.{n}" for n in range(6)], "127.0.0.66", void,
                        respect_robots_txt=False)
        assert list(frame["status"]) == ["downloaded"] * 6
        assert all(url.startswith(good.base_url) for url in frame["url"]) and list(frame["copies"]) == [2] * 6
        assert held.hits() == 1  # one 503, then its papers went to the other copy, within its 30 s hold:
        assert max(good.arrivals()) < held.arrivals()[0] + 30
    with pytest.raises(ValueError, match="choose from version, speed"):
        Retriever(out_dir=tmp_path, prefer="fast")


# ---------------------------------------------------------------------- facts learned after the assignment
_PDF = Reply(200, b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n" + b"0" * 900 + b"\n%%EOF\n",
             {"Content-Type": "application/pdf"})


def _robots(delay, other=None):
    def route(request):
        if request.path == "/robots.txt":
            return Reply(200, f"User-agent: *\nCrawl-delay: {delay}\n", {"Content-Type": "text/plain"})
        return other(request) if callable(other) else (other or _PDF)
    return route


def _one_paper(tmp_path, locations, address, **settings):
    """Download one DOI whose OpenAlex record lists *locations* (*settings*: more Retriever settings); returns its
    outcomes frame."""
    import json

    from paperfetch import Retriever

    record = {"doi": "https://doi.org/10.5555/late.1", "title": "Late", "best_oa_location": locations[0],
              "locations": locations, "open_access": {"is_oa": True, "oa_url": locations[0]["pdf_url"]}}
    with LoopbackHost(address, {"*": lambda request: Reply(200, json.dumps(record).encode(),
                                                           {"Content-Type": "application/json"})}) as oa, \
            LoopbackHost(address.rsplit(".", 1)[0] + "." + str(int(address.rsplit(".", 1)[1]) + 1),
                         {"*": Reply(404)}) as void:
        endpoints = {name: void.base_url for name in ("unpaywall", "crossref", "europepmc", "doi")}
        r = Retriever(email="t@uni.example", out_dir=tmp_path, sources=["openalex"], progress=False, verbosity=0,
                      cache=False, state="memory", endpoints={"openalex": oa.base_url, **endpoints},
                      delay_min_s=0.05, delay_max_s=0.05, **settings)
        frame = r.download(["10.5555/late.1"])
        r.close()
    return frame


def _page(n):
    """A landing page naming its PDF, ``/p/N.pdf``, in a citation_pdf_url meta tag."""
    return Reply(200, f'<html><head><meta name="citation_pdf_url" content="/p/{n}.pdf"></head></html>'.encode(),
                 {"Content-Type": "text/html"})


def _location(pdf_url, landing=None):
    return {"is_oa": True, "pdf_url": pdf_url, "landing_page_url": landing, "version": "publishedVersion",
            "source": {"type": "journal"}}


def test_a_crawl_delay_read_after_the_assignment_sends_the_paper_to_its_other_copy(tmp_path):
    with LoopbackHost("127.0.0.71", {"*": _robots(15)}) as slow, LoopbackHost("127.0.0.72", {"*": _robots(0.05)}) as fast:
        frame = _one_paper(tmp_path, [_location(slow.url("/p/1.pdf")), _location(fast.url("/p/1.pdf"))], "127.0.0.73")
        assert list(frame["status"]) == ["downloaded"] and frame["url"][0].startswith(fast.base_url)
        assert slow.hits() == 1 and slow.hits("/robots.txt") == 1  # its robots.txt only, in its first slot
    # the 15 s Crawl-delay, learned in the host's first slot, was not waited for: the PDF came before it ended
    assert fast.arrivals("/p/")[-1] < slow.arrivals("/robots.txt")[0] + 15


def test_the_paper_that_got_the_503_takes_its_copy_elsewhere_before_its_page_on_the_held_host(tmp_path):
    down = Reply(503, b"down", {"Retry-After": "30"})
    with LoopbackHost("127.0.0.75", {"*": _robots(0.05, down)}) as held, \
            LoopbackHost("127.0.0.76", {"*": _robots(0.05)}) as good:
        locations = [_location(held.url("/p/1.pdf"), held.url("/article/1")), _location(good.url("/p/1.pdf"))]
        frame = _one_paper(tmp_path, locations, "127.0.0.77")
        assert list(frame["status"]) == ["downloaded"] and frame["url"][0].startswith(good.base_url)
    # the 30 s hold stayed on the held host; the paper did not wait it out
    answered_503 = min(t for t, path in held.log if path != "/robots.txt")
    assert good.arrivals("/p/")[-1] < answered_503 + 30


def test_the_paper_whose_pdf_host_opened_its_breaker_takes_its_copy_elsewhere_before_the_probe(tmp_path):
    """A's PDF answers a plain 500 (no Retry-After: no hold) and opens A's breaker (one failure, a 30 s backoff):
    the paper does not wait for the probe to ask A again or to read A's page; its copy on B, known by its page,
    goes first and is served before the probe time."""
    with LoopbackHost("127.0.0.89", {"*": _robots(0.05, Reply(500, b"broken"))}) as broken, \
            LoopbackHost("127.0.0.90", {"*": _robots(0.05, lambda r: _page(r.path[3:]) if r.path.startswith("/a/")
                                                      else _PDF)}) as good:
        locations = [_location(broken.url("/p/1.pdf"), broken.url("/article/1")), _location(None, good.url("/a/1"))]
        frame = _one_paper(tmp_path, locations, "127.0.0.91",
                           http_options={"breaker_failures": 1, "backoff_base_s": 30})
        assert list(frame["status"]) == ["downloaded"] and frame["url"][0] == good.url("/p/1.pdf")
    # counted after the call returned: A was asked its PDF once (the 500 that opened the breaker) and nothing
    # after it, and B served the paper before A's breaker let its probe through
    asked = [(t, path) for t, path in broken.log if path != "/robots.txt"]
    assert [path for _, path in asked] == ["/p/1.pdf"]
    assert good.arrivals("/p/")[-1] < asked[0][0] + 30


@pytest.mark.parametrize("down, options", [
    (Reply(503, b"down", {"Retry-After": "240"}), {}),  # a hold
    (Reply(500, b"broken"), {"breaker_failures": 1, "backoff_base_s": 60}),  # no hold: the breaker open until its probe
])
def test_papers_whose_pdf_host_answers_503_are_served_from_their_copy_elsewhere_before_the_hold_ends(tmp_path, down,
                                                                                                    options):
    """Four papers, each a PDF and its page on host A and an open copy on host B known by its page: A's first PDF
    request answers 503 + Retry-After far longer than the test runs (or a plain 500 that opens A's breaker for as
    long, within the batch's wait for a host), and every paper (the one that got the answer and those queued behind
    it by A's 0.5 s Crawl-delay) is served from B; A is never asked again within its hold (or before its probe)."""
    page = _page
    with LoopbackHost("127.0.0.81", {"*": _robots(0.5, lambda r: page(r.path[3:]) if r.path.startswith("/a/") else down)}) \
            as held, LoopbackHost("127.0.0.82", {"*": _robots(0.05, lambda r: page(r.path[3:]) if r.path.startswith("/a/")
                                                             else _PDF)}) as good, \
            LoopbackHost("127.0.0.83", {"*": Reply(404)}) as void:
        def work(n):
            locations = [_location(held.url(f"/p/{n}.pdf"), held.url(f"/a/{n}")), _location(None, good.url(f"/a/{n}"))]
            return {"doi": f"https://doi.org/10.5555/held.{n}", "title": f"Held {n}", "best_oa_location": locations[0],
                    "locations": locations, "open_access": {"is_oa": True, "oa_url": locations[0]["pdf_url"]}}

        frame = _papers(tmp_path, work, [f"10.5555/held.{n}" for n in range(4)], "127.0.0.84", void,
                        http_options=options)
        assert list(frame["status"]) == ["downloaded"] * 4
        assert list(frame["url"]) == [good.url(f"/p/{n}.pdf") for n in range(4)]
    # counted after the call returned: the hold (or the open breaker) outlasts the call, and A was asked one PDF (its
    # 503 or 500) and nothing after it (no page, no second try): every paper was served from B before it ended
    asked = [path for _, path in held.log if path != "/robots.txt"]
    assert len(asked) == 1 and asked[0].startswith("/p/")
    assert sorted(path for _, path in good.log if path.startswith("/p/")) == [f"/p/{n}.pdf" for n in range(4)]


def test_a_plain_503_on_the_only_copy_is_retried_not_traded_for_a_page_elsewhere(tmp_path):
    answers = [Reply(503, b"busy"), _PDF]  # no Retry-After: no hold, the transport's retry after a backoff
    page = Reply(200, b'<html><head><meta name="citation_pdf_url" content="/p/1.pdf"></head></html>',
                 {"Content-Type": "text/html"})
    with LoopbackHost("127.0.0.86", {"*": _robots(0.05, lambda r: answers.pop(0))}) as busy, \
            LoopbackHost("127.0.0.87", {"*": _robots(0.05, page)}) as other:
        frame = _one_paper(tmp_path, [_location(busy.url("/p/1.pdf")), _location(None, other.url("/a/1"))], "127.0.0.88")
        assert list(frame["status"]) == ["downloaded"] and frame["url"][0] == busy.url("/p/1.pdf")
        assert busy.hits("/p/1.pdf") == 2 and other.hits("/a/1") == 0
