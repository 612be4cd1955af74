"""The transport against the services' published limits and refusals.

* OpenAlex's budget (``X-RateLimit-*``, recorded in ``shared/fixtures/real/openalex/works_doi_*.vcr.yaml``,
  2026-07-23): read into the host's facts, shown as ``credits_left``; a spent budget is a hold until it
  renews, with one warning, and the other sources carry on;
* Crossref's pools (``x-rate-limit-limit`` / ``x-rate-limit-interval`` / ``x-concurrency-limit``, recorded in
  ``shared/fixtures/real/crossref/habanero__*2026.yaml``): the pace and the requests in flight follow them;
* arXiv's 429s: a hold and the breaker, like any other host;
* PMC's proof-of-work page and its 403 to scripts: a named bot check, never a saved PDF.

The spent-budget 429 itself was never recorded (PROVENANCE-3, "Searched for but not found"): its shape
here is the one the OpenAlex CLI reads (``X-RateLimit-Remaining < X-RateLimit-Credits-Required``,
``Retry-After`` until midnight UTC) with the recorded header names. It is synthetic.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from dataclasses import replace
from datetime import datetime, timezone

import pytest
from requests.structures import CaseInsensitiveDict

from paperfetch import FakeClock, HttpClient, Retriever
from paperfetch.clock import SystemClock
from paperfetch.demo import DemoWorld
from paperfetch.http import policy
from paperfetch.http.batch import get_many
from paperfetch.http.config import TransportConfig
from paperfetch.http.headers import PoolLimits, RateLimitBudget, parse_pool_limits, parse_rate_limit_budget
from paperfetch.http.hosts import HostRegistry, host_key
from paperfetch.state.base import BreakerState, HostFacts
from paperfetch.testing import LoopbackHost, Reply, Request, gaps, scripted_session

NOW = 1_784_787_056.0  # Thu, 23 Jul 2026 06:10:56 GMT: the Date of the recorded OpenAlex answer
MIDNIGHT = datetime(2026, 7, 24, tzinfo=timezone.utc).timestamp()

#: The budget headers of fixtures/real/openalex/works_doi_10.1101_097196.vcr.yaml (200, 2026-07-23 06:10:56 GMT).
RECORDED_OPENALEX = {
    "X-RateLimit-Cost-USD": "0.0001", "X-RateLimit-Credits-Used": "1", "X-RateLimit-Limit": "1000",
    "X-RateLimit-Limit-USD": "0.1", "X-RateLimit-Onetime-Remaining": "0", "X-RateLimit-Prepaid-Remaining-USD": "0",
    "X-RateLimit-Remaining": "993", "X-RateLimit-Remaining-USD": "0.0993", "X-RateLimit-Reset": "64144",
}
#: The pool headers of fixtures/real/crossref/habanero__test_funders_fail_limit__2026.yaml (public pool).
RECORDED_CROSSREF_PUBLIC = {"x-api-pool": "public", "x-rate-limit-limit": "5", "x-rate-limit-interval": "1s",
                            "x-concurrency-limit": "1"}


def spent_headers(now: float) -> dict[str, str]:
    """A spent budget's 429, in the recorded names (synthetic: no such answer was recorded)."""
    until_midnight = math.ceil((now // 86400 + 1) * 86400 - now)
    return {
        "Content-Type": "application/json", "Retry-After": str(until_midnight), "X-RateLimit-Limit": "1000",
        "X-RateLimit-Remaining": "0", "X-RateLimit-Credits-Used": "0", "X-RateLimit-Credits-Required": "1",
        "X-RateLimit-Reset": str(until_midnight), "X-RateLimit-Limit-USD": "0.1", "X-RateLimit-Remaining-USD": "0",
    }


SPENT_BODY = json.dumps({"error": "Rate limit exceeded", "message": "Daily credit budget exhausted. "
                         "Get a free API key at https://openalex.org/settings/api"}).encode()


# ---------------------------------------------------------------------- the header parsers
@pytest.mark.parametrize(("headers", "expected"), [
    (RECORDED_OPENALEX, RateLimitBudget(1000, 993, 1, None, MIDNIGHT)),
    (spent_headers(NOW), RateLimitBudget(1000, 0, 0, 1, MIDNIGHT)),
    ({"X-RateLimit-Remaining": "5", "X-RateLimit-Credits-Required": "10"}, RateLimitBudget(None, 5, None, 10, None)),
    ({"X-RateLimit-Limit": "1000", "X-RateLimit-Reset": str(int(MIDNIGHT))}, RateLimitBudget(1000, None, None, None, MIDNIGHT)),
    ({"X-RateLimit-Remaining": "lots", "X-RateLimit-Limit": "-3"}, None),   # garbage is no announcement
    ({"RateLimit-Remaining": "99", "RateLimit-Limit": "100"}, None),        # the 2025 Heroku per-second window
    ({}, None),
])
def test_rate_limit_budget_is_read_from_the_x_ratelimit_headers(headers, expected):
    assert parse_rate_limit_budget(CaseInsensitiveDict(headers), NOW) == expected


@pytest.mark.parametrize(("budget", "spent"), [
    (RateLimitBudget(1000, 993, 1, None, MIDNIGHT), False),
    (RateLimitBudget(1000, 0, 0, 1, MIDNIGHT), True),
    (RateLimitBudget(None, 5, None, 10, None), True),     # a request that needs 10 credits, 5 left
    (RateLimitBudget(None, 10, None, 10, None), False),
    (RateLimitBudget(None, 0, None, None, None), True),   # none left, the need not said
    (RateLimitBudget(1000, None, None, None, None), False),
])
def test_a_budget_is_spent_when_fewer_credits_are_left_than_a_request_needs(budget, spent):
    assert budget.spent is spent


@pytest.mark.parametrize(("headers", "expected", "gap"), [
    (RECORDED_CROSSREF_PUBLIC, PoolLimits(5, 1.0, 1), 0.2),
    ({"x-rate-limit-limit": "10", "x-rate-limit-interval": "1s", "x-concurrency-limit": "3"}, PoolLimits(10, 1.0, 3), 0.1),
    ({"x-api-pool": "plus", "x-rate-limit-limit": "150", "x-rate-limit-interval": "1s"}, PoolLimits(150, 1.0, None), 1 / 150),
    ({"x-rate-limit-limit": "50", "x-rate-limit-interval": "1m"}, PoolLimits(50, 60.0, None), 1.2),
    ({"x-rate-limit-limit": "5", "x-rate-limit-interval": "500ms"}, PoolLimits(5, 0.5, None), 0.1),
    ({"x-concurrency-limit": "2"}, PoolLimits(None, None, 2), None),
    ({"x-rate-limit-limit": "0", "x-rate-limit-interval": "soon", "x-concurrency-limit": "0"}, None, None),
    ({}, None, None),
])
def test_pool_limits_are_read_from_the_crossref_headers(headers, expected, gap):
    pool = parse_pool_limits(CaseInsensitiveDict(headers))
    assert pool == expected
    if pool is not None:
        assert pool.min_gap_s == (pytest.approx(gap) if gap is not None else None)


# ---------------------------------------------------------------------- the policy, on values
SETTINGS = TransportConfig()


def test_every_answer_updates_the_credits_left_and_the_reset_time():
    facts, notices = policy.observe_response(HostFacts(), SETTINGS, status=200, headers=CaseInsensitiveDict(RECORDED_OPENALEX),
                                             now=NOW)
    assert (facts.credits_limit, facts.credits_left, facts.credits_reset_at) == (1000, 993, MIDNIGHT)
    assert facts.hold_until is None and facts.budget_spent_until is None and notices == ()


def test_a_spent_budget_is_a_hold_until_the_reset_not_a_failure_nor_a_pace():
    headers = CaseInsensitiveDict(spent_headers(NOW))
    facts, notices = policy.observe_response(HostFacts(), SETTINGS, status=429, headers=headers, now=NOW, gap_s=0.2)
    assert facts.hold_until == MIDNIGHT == facts.budget_spent_until  # 17 h 49 min: not capped, not a transient wait
    assert facts.hold_status == 429 and "budget spent" in facts.hold_reason and "00:00:00 UTC" in facts.hold_reason
    assert (facts.breaker_failures, facts.breaker_state, facts.backoff_s, facts.learned_interval_s) == (0, BreakerState.CLOSED, 0.0, 0.0)
    assert [n.kind for n in notices] == ["budget"]
    # not retried: the wait is the hold, far beyond what a call waits
    wait, _, _ = policy.retry_wait(facts, SETTINGS, status=429, headers=headers, now=NOW)
    assert wait == pytest.approx(MIDNIGHT - NOW)
    decision = policy.decide(facts, policy.Pace(), SETTINGS, host="h", now=NOW + 1, mono=0.0, allowance=300.0)
    assert decision.verdict is policy.Verdict.HELD
    # a second spent answer (a request already on its way) says nothing new: one notice per spent period
    again, more = policy.observe_response(facts, SETTINGS, status=429, headers=CaseInsensitiveDict(spent_headers(NOW + 1)),
                                          now=NOW + 1)
    assert more == () and again.hold_until == MIDNIGHT
    # after the reset a 2xx with credits lifts the "spent" mark
    renewed = dict(RECORDED_OPENALEX, **{"X-RateLimit-Remaining": "999"})
    after, _ = policy.observe_response(replace(again, hold_until=None), SETTINGS, status=200,
                                       headers=CaseInsensitiveDict(renewed), now=MIDNIGHT + 5)
    assert after.budget_spent_until is None and after.credits_left == 999


def test_a_transient_429_still_counts_for_the_breaker_and_the_learned_interval():
    headers = CaseInsensitiveDict({"Retry-After": "2", "X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "600"})
    facts, notices = policy.observe_response(HostFacts(), SETTINGS, status=429, headers=headers, now=NOW, gap_s=0.2)
    assert facts.breaker_failures == 1 and facts.learned_interval_s == pytest.approx(2.2) and facts.budget_spent_until is None
    assert "budget" not in [n.kind for n in notices] and facts.credits_left == 600


def test_the_last_credit_spent_on_a_200_holds_the_host_before_it_refuses():
    headers = CaseInsensitiveDict(dict(RECORDED_OPENALEX, **{"X-RateLimit-Remaining": "0"}))
    facts, notices = policy.observe_response(HostFacts(), SETTINGS, status=200, headers=headers, now=NOW)
    assert facts.hold_until == MIDNIGHT and facts.hold_status == 429 and [n.kind for n in notices] == ["budget"]


@pytest.mark.parametrize(("pool", "announced", "global_cap", "expected"), [
    (None, None, 1, 1),    # no pool, nothing announced: max_in_flight_per_host
    (None, 3, 1, 1),       # an announcement never raises a host above the client's cap
    (None, 1, 4, 1),       # ... but lowers it
    (3, None, 1, 1),       # a declared pool, nothing announced yet: the safe 1
    (3, 3, 1, 3),          # Crossref's polite pool: 3
    (3, 5, 1, 3),          # never above the pool's cap
    (1, 3, 1, 1),          # the public pool: 1, whatever is announced
    (3, 2, 1, 2),
])
def test_in_flight_cap_follows_the_pool_and_the_announced_limit(pool, announced, global_cap, expected):
    settings = TransportConfig(max_in_flight_per_host=global_cap, host_concurrency={"h": pool} if pool else {})
    assert policy.in_flight_cap(HostFacts(concurrency_limit=announced), settings, "h") == expected


def test_the_announced_interval_replaces_the_declared_one_and_is_a_published_floor():
    settings = TransportConfig(host_intervals={"api.crossref.org": 0.2})
    polite = CaseInsensitiveDict({"x-rate-limit-limit": "10", "x-rate-limit-interval": "1s", "x-concurrency-limit": "3"})
    facts, _ = policy.observe_response(HostFacts(), settings, status=200, headers=polite, now=NOW)
    assert facts.announced_interval_s == pytest.approx(0.1) and facts.concurrency_limit == 3
    assert policy.delay_range(facts, settings, "api.crossref.org").low == pytest.approx(0.1)  # lowered from 0.2
    slower = CaseInsensitiveDict({"x-rate-limit-limit": "2", "x-rate-limit-interval": "1s"})
    facts, _ = policy.observe_response(facts, settings, status=200, headers=slower, now=NOW)
    assert policy.delay_range(facts, settings, "api.crossref.org").low == pytest.approx(0.5)  # raised
    assert policy.floor(facts, settings, "api.crossref.org") == pytest.approx(0.5)
    assert policy.delay_range(HostFacts(), settings, "api.crossref.org").low == pytest.approx(0.2)  # unknown: declared


# ---------------------------------------------------------------------- one client, scripted
def test_domain_status_shows_credits_left_and_the_hold_of_a_spent_budget(caplog):
    clock = FakeClock(start_wall=NOW)
    session, adapter = scripted_session({
        "https://api.openalex.org/works/doi:10.1/a": Reply(200, b"{}", RECORDED_OPENALEX),
        "https://api.openalex.org/works/doi:10.1/b": Reply(429, SPENT_BODY, spent_headers(NOW)),
    })
    with HttpClient(session=session, clock=clock) as client:
        client.host_limiter("https://api.openalex.org").describe(service="OpenAlex", budget_remedy="Get a key.")
        client.get("https://api.openalex.org/works/doi:10.1/a")
        assert client.domain_status()["credits_left"].tolist() == [993]
        with caplog.at_level(logging.WARNING, logger="paperfetch"):
            answer = client.get("https://api.openalex.org/works/doi:10.1/b")
            again = client.get("https://api.openalex.org/works/doi:10.1/c")  # held: nothing sent
        frame = client.domain_status()
    assert answer.status_code == 429 and again.headers["X-Paperfetch-Synthetic"] == "held"
    assert adapter.urls() == ["https://api.openalex.org/works/doi:10.1/a", "https://api.openalex.org/works/doi:10.1/b"]
    row = frame.iloc[0]
    assert row["credits_left"] == 0 and row["held_until"].timestamp() == pytest.approx(MIDNIGHT, abs=1)
    assert row["breaker"] == "closed" and row["learned_interval_s"] == 0.0
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "OpenAlex" in warnings[0] and "Get a key." in warnings[0], warnings
    assert list(frame.columns)[-1] == "credits_left"


# ---------------------------------------------------------------------- through the Retriever, on loopback
class NoonClock(SystemClock):
    """The real clock with its wall time moved to 12:00 UTC of today: a daily budget's midnight is always half a
    day away, whenever the test runs (near real midnight it would be a wait of seconds, not a hold)."""

    def __init__(self) -> None:
        now = time.time()
        self.shift = (now // 86400) * 86400 + 43200 - now

    def time(self) -> float:
        return super().time() + self.shift


NOON = NoonClock()


class SpentOpenAlexWorld(DemoWorld):
    """The demo world whose OpenAlex answers every request with a spent budget, renewing at (moved) midnight."""

    def _serve_openalex(self, request: Request) -> Reply:
        return Reply(429, SPENT_BODY, spent_headers(NOON.time()))


@pytest.fixture
def spent_world():
    with SpentOpenAlexWorld(base_ip=200) as world:
        yield world
    from paperfetch.http.hosts import host_limiter

    host_limiter(world.endpoints["openalex"]).release()  # the process's memory store outlives the test


FAST = {"network_retry_base_s": 0.05, "rate_limit_min_s": 0.05, "rate_limit_max_s": 0.1}
#: papers no other source offers a copy of: without OpenAlex their rows can only say "held"
VIA_OPENALEX = ["10.5555/demo.closed", "10.5555/demo.unknown"]
VIA_UNPAYWALL = ["10.5555/demo.slow1", "10.5555/demo.html"]


def test_a_spent_openalex_budget_holds_openalex_until_midnight_and_the_other_sources_carry_on(spent_world, tmp_path, caplog):
    openalex = spent_world.hosts["openalex"]
    with caplog.at_level(logging.WARNING, logger="paperfetch"):
        with Retriever(email="tester@uni.example", out_dir=tmp_path, endpoints=spent_world.endpoints, progress=False,
                       verbosity=0, cache=False, http=HttpClient(clock=NOON, **FAST)) as r:
            first = r.download(VIA_OPENALEX + VIA_UNPAYWALL)
            assert openalex.hits() == 1  # the one batched lookup: refused, and never asked again
            second = r.download(["10.5555/demo.unknown"])  # host_held is retryable: asked again, held again
            status = r.domain_status()
    assert openalex.hits() == 1
    by_input = first.set_index("input")
    assert by_input.loc[VIA_UNPAYWALL, "status"].tolist() == ["downloaded", "downloaded"]  # the others carry on
    assert by_input.loc[VIA_UNPAYWALL, "source"].tolist() == ["unpaywall", "unpaywall"]
    for frame, inputs in ((by_input, VIA_OPENALEX), (second.set_index("input"), ["10.5555/demo.unknown"])):
        for key in inputs:
            row = frame.loc[key]
            assert row["status"] == "host_held" and row["source"] == "openalex", row.to_dict()
            assert "00:00:00 UTC" in row["error"] and "budget spent" in row["error"], row["error"]
    spent = status.set_index("host").loc[host_key(spent_world.endpoints["openalex"])]
    midnight = (NOON.time() // 86400 + 1) * 86400
    assert spent["held_until"].timestamp() == pytest.approx(midnight, abs=2) and spent["credits_left"] == 0
    named = [rec.getMessage() for rec in caplog.records
             if rec.levelno >= logging.WARNING and "openalex" in rec.getMessage().lower()]
    assert len(named) == 1, named
    assert "OpenAlex" in named[0] and "PAPERFETCH_OPENALEX_API_KEY" in named[0]


# ---------------------------------------------------------------------- Crossref's concurrency, on loopback
class ConcurrencyCounter:
    """A handler that holds each request briefly and records how many were in progress at once."""

    def __init__(self, headers: dict[str, str], hold_s: float = 0.4) -> None:
        self.headers = headers
        self.hold_s = hold_s
        self.now = self.peak = 0
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        time.sleep(self.hold_s)
        with self.lock:
            self.now -= 1
        return Reply(200, b'{"status":"ok"}', {"Content-Type": "application/json", **self.headers})


POLITE = {"x-api-pool": "polite", "x-rate-limit-limit": "10", "x-rate-limit-interval": "1s"}


@pytest.mark.parametrize(("announced", "pool", "expected_peak"), [
    ("3", 3, 3),   # the polite pool: 3 at once, as announced
    ("2", 3, 2),   # announced lower than the pool: the announcement
    ("3", 1, 1),   # the public pool: never above 1
    (None, 3, 1),  # nothing announced: the safe 1
])
def test_the_requests_in_flight_to_crossref_never_exceed_the_announced_limit(announced, pool, expected_peak):
    # each request is held past the 0.1 s interval, so requests overlap unless the limit keeps them apart; three
    # at once need a hold past two intervals
    counter = ConcurrencyCounter({**POLITE, **({"x-concurrency-limit": announced} if announced else {})},
                                 hold_s=0.4 if expected_peak > 1 else 0.25)
    with LoopbackHost("127.0.0.1", {"*": counter}) as server:
        key = host_key(server.base_url)
        with HttpClient(registry=HostRegistry(), host_concurrency={key: pool}) as client:  # as the Retriever declares it
            client.get(server.url("/works/first"))  # the first answer announces the pool
            assert counter.peak == 1
            urls = [server.url(f"/works/10.1/{i}") for i in range(9)]
            answers = get_many(client, urls, workers=6)
            snap = client.snapshot(server.base_url)
    assert all(a.status_code == 200 for a in answers)
    assert counter.peak == expected_peak, counter.peak
    assert snap.max_in_flight == expected_peak
    assert snap.delay_min_s == pytest.approx(0.1)  # 10 per 1 s: the interval follows the headers


def test_the_pace_to_crossref_follows_its_announced_interval():
    counter = ConcurrencyCounter(RECORDED_CROSSREF_PUBLIC, hold_s=0.0)
    with LoopbackHost("127.0.0.1", {"*": counter}) as server:
        key = host_key(server.base_url)
        with HttpClient(registry=HostRegistry(), host_intervals={key: 0.05}, host_concurrency={key: 3}) as client:
            for i in range(5):
                client.get(server.url(f"/works/10.1/{i}"))
        starts = server.arrivals("/works/")
    assert counter.peak == 1
    assert min(gaps(starts)[1:]) >= 0.2 - 0.01  # 5 per 1 s announced: 0.2 s, not the declared 0.05 s


# ---------------------------------------------------------------------- arXiv's 429s
@pytest.mark.parametrize("host", ["export.arxiv.org", "arxiv.org"])
def test_an_arxiv_429_with_retry_after_holds_the_host(host):
    clock = FakeClock(start_wall=NOW)
    url = f"https://{host}/api/query?id_list=1605.08386"
    session, adapter = scripted_session({url: Reply(429, b"Rate exceeded.", {"Retry-After": "3600"})})
    with HttpClient(session=session, clock=clock) as client:
        first = client.get(url)
        second = client.get(url)
        snap = client.snapshot(url)
    assert first.status_code == 429 and second.headers["X-Paperfetch-Synthetic"] == "held"
    assert len(adapter.urls()) == 1  # the hour is not waited for, nor retried
    assert snap.held_until is not None and snap.held_until.timestamp() == pytest.approx(NOW + 3600, abs=1)
    assert snap.hold_status == 429 and snap.failures == 1


@pytest.mark.parametrize("host", ["export.arxiv.org", "arxiv.org"])
def test_arxiv_429s_without_retry_after_open_its_breaker(host):
    clock = FakeClock(start_wall=NOW)
    url = f"https://{host}/pdf/1605.08386v1"
    session, adapter = scripted_session({url: Reply(429, b"Rate exceeded.")})
    with HttpClient(session=session, clock=clock, default_retry_after_s=5.0) as client:
        answer = client.get(url)  # 4 attempts, 3 s apart at least (arXiv's interval)
        snap = client.snapshot(url)
        ready = client.ready_in(url)
    assert answer.status_code == 429 and len(adapter.urls()) == 4
    # the third failure opened the breaker; the fourth attempt was its probe, which reopened it for twice as long
    assert snap.breaker == "open" and snap.failures == 4 and snap.breaker_open_until is not None and ready > 0
    starts = [t for t in clock.sleeps]
    assert sum(starts) >= 3 * 3.0  # arXiv's 3 s between the attempts, whatever the retry asked for


class LimitedArxivWorld(DemoWorld):
    """The demo world whose arXiv answers 429 for an hour (as it has for some clients since late 2025)."""

    def _serve_arxiv(self, request: Request) -> Reply:
        return Reply(429, b"Rate exceeded.", {"Retry-After": "3600", "Content-Type": "text/plain"})


def test_an_arxiv_429_through_the_retriever_is_a_held_row_and_the_host_held_in_domain_status(tmp_path):
    with LimitedArxivWorld(base_ip=170) as world:
        arxiv = world.hosts["arxiv"]
        try:
            with Retriever(email="tester@uni.example", out_dir=tmp_path, endpoints=world.endpoints, progress=False,
                           verbosity=0, cache=False, http_options=FAST, sources=["arxiv"]) as r:
                frame = r.download(["arXiv:2101.00001v2", "arXiv:2101.00002v1"])
                status = r.domain_status().set_index("host")
            hits = arxiv.hits()
        finally:
            from paperfetch.http.hosts import host_limiter

            host_limiter(arxiv.base_url).release()
    assert frame["status"].tolist() == ["host_held", "host_held"], frame[["status", "error"]].to_dict("records")
    assert frame["source"].tolist() == ["arxiv", "arxiv"] and all("asked for no requests" in e for e in frame["error"])
    assert hits == 1  # the second paper was answered from the hold, without a request
    held = status.loc[host_key(arxiv.base_url)]
    assert held["hold_status"] == 429 and held["held_until"].timestamp() == pytest.approx(time.time() + 3600, abs=30)


# ---------------------------------------------------------------------- PMC's bot check
#: PMC's 403 to scripts, byte for byte as GjjvdBurg/paper2remarkable#160 shows it (curl -i, 2025-09-20): 134 bytes.
PMC_403 = (b'<!doctype html><meta charset="utf-8"><meta name=viewport content="width=device-width, '
           b'initial-scale=1"><title>403</title>403 Forbidden')


def pmc_pow_page() -> bytes:
    """PMC's "Preparing to download ..." page in the shape the 2026 reports give (no byte copy was recorded,
    PROVENANCE-3): the title, and the script that hands the browser a SHA-256 puzzle and names the cookie.
    Padded to the ~1.8 KB reported."""
    page = (
        "\n\n<html>\n  <head>\n    <meta charset=\"utf-8\">\n    <title>Preparing to download ...</title>\n"
        "    <link rel=\"stylesheet\" href=\"/static/pow.css\">\n  </head>\n  <body>\n"
        "    <main><h1>Preparing to download ...</h1><p>This should only take a moment.</p></main>\n"
        "    <script type=\"module\">\n      const POW_CHALLENGE = \"c2FtcGxlLWNoYWxsZW5nZQ:demo\"\n"
        "      const POW_DIFFICULTY = \"4\"\n      const POW_COOKIE_NAME = \"cloudpmc-viewer-pow\"\n"
        "      window.ncbi.pmc.pow.init(POW_CHALLENGE, POW_DIFFICULTY, POW_COOKIE_NAME)\n    </script>\n"
    )
    padding = "<!-- " + "." * max(0, 1800 - len(page) - 30) + " -->\n"
    return (page + padding + "  </body>\n</html>\n").encode()


def test_pmc_proof_of_work_page_is_named_pmcs_bot_check():
    from paperfetch.validate import sniff

    body = pmc_pow_page()
    assert 1700 < len(body) < 1900
    verdict = sniff(body[:2048], "text/html; charset=utf-8")
    assert not verdict.ok and verdict.kind == "bot_challenge"
    assert "PMC's bot check" in verdict.reason and "cloudpmc-viewer-pow" in verdict.reason
    # the head alone is enough: the title comes first
    assert sniff(body[:200], "text/html").kind == "bot_challenge"


@pytest.mark.parametrize(("url", "status", "head", "named"), [
    ("https://pmc.ncbi.nlm.nih.gov/articles/PMC8562558/pdf", 403, PMC_403, True),
    ("https://pmc.ncbi.nlm.nih.gov/articles/PMC8562558/pdf/fnins-15-123.pdf", 403, b"", True),  # body not read
    ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC8562558/pdf/", 403, PMC_403, True),
    ("https://pmc.ncbi.nlm.nih.gov/articles/PMC8562558/pdf", 200, pmc_pow_page(), True),
    ("https://journals.example.org/pdf/1", 403, PMC_403, False),       # the same bare page elsewhere: a plain 403
    ("https://pmc.ncbi.nlm.nih.gov/articles/PMC8562558/pdf", 404, b"", False),
    ("https://pmc.ncbi.nlm.nih.gov/articles/PMC8562558/pdf", 403, b"<html><title>Sorry</title>Maintenance" * 20, False),
])
def test_refusal_bot_check_names_pmcs_403_to_scripts(url, status, head, named):
    from paperfetch.validate import refusal_bot_check

    name = refusal_bot_check(url, status, head)
    assert (name is not None and "PMC's bot check" in name) is named, name


class PmcGateWorld(DemoWorld):
    """The demo world whose "challenge" publisher is PMC's gate: the proof-of-work page for every PDF."""

    def _publisher(self, name: str, request: Request) -> Reply:
        if name == "challenge" and request.path.startswith("/pdf/"):
            return Reply(200, pmc_pow_page(), {"Content-Type": "text/html; charset=utf-8"})
        return super()._publisher(name, request)


def test_pmc_bot_check_through_the_retriever_is_a_named_row_and_never_a_saved_pdf(tmp_path):
    with PmcGateWorld(base_ip=110) as world:
        with Retriever(email="tester@uni.example", out_dir=tmp_path, endpoints=world.endpoints, progress=False,
                       verbosity=0, cache=False, http_options=FAST) as r:
            frame = r.download(["10.5555/demo.challenge"])
    row = frame.iloc[0]
    assert row["status"] == "invalid_pdf", row.to_dict()
    assert "bot check" in row["error"] and "PMC" in row["error"]
    assert row["path"] is None or pd_isna(row["path"])
    assert not list(tmp_path.glob("*.pdf")) and not list(tmp_path.glob("*.part"))


def pd_isna(value: object) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


def test_host_concurrency_is_a_knob_that_survives_from_config_and_reconfiguring():
    from paperfetch.errors import ConfigurationError
    from paperfetch.http.config import TransportConfig

    client = HttpClient.from_config(TransportConfig(host_concurrency={"API.Crossref.org": 3}), registry=HostRegistry())
    assert client.host_concurrency == {"api.crossref.org": 3}
    client.max_retries = 1  # a new config, the caps kept
    assert client.config.rule("api.crossref.org").in_flight == 3
    with pytest.raises(ConfigurationError):
        HttpClient(host_concurrency={"h": 0})


class RefusingArxivWorld(DemoWorld):
    """The demo world whose arXiv answers 429 without a Retry-After, every time."""

    def _serve_arxiv(self, request: Request) -> Reply:
        return Reply(429, b"Rate exceeded.", {"Content-Type": "text/plain"})


def test_arxiv_429s_without_retry_after_open_the_breaker_and_the_rows_say_until_when(tmp_path):
    with RefusingArxivWorld(base_ip=80) as world:
        arxiv = world.hosts["arxiv"]
        key = host_key(arxiv.base_url)
        options = {**FAST, "max_retries": 0, "breaker_failures": 2, "max_host_wait_s": 0.5, "host_intervals": {key: 0.05}}
        try:
            with Retriever(email="tester@uni.example", out_dir=tmp_path, endpoints=world.endpoints, progress=False,
                           verbosity=0, cache=False, http_options=options, sources=["arxiv"], workers=1) as r:
                frame = r.download([f"arXiv:2101.0000{i}v1" for i in range(1, 6)])
                status = r.domain_status().set_index("host")
            hits = arxiv.hits()
        finally:
            from paperfetch.http.hosts import host_limiter

            host_limiter(arxiv.base_url).release()
    assert hits == 2  # two refusals opened the breaker; the other papers were answered without a request
    assert frame["status"].tolist() == ["host_held"] * 5 and frame["source"].tolist() == ["arxiv"] * 5
    assert all("breaker open" in e and "UTC" in e for e in frame["error"]), frame["error"].tolist()
    row = status.loc[key]
    assert row["breaker"] == "open" and row["failures"] == 2 and not pd_isna(row["breaker_open_until"])


def test_a_budget_spent_midway_keeps_the_batches_answered_before_it(tmp_path):
    """OpenAlex answers the first batch of 50 with its last credit (``X-RateLimit-Remaining: 0``): the host
    is held from that answer on, so the other two batches are never sent and only their items are held."""
    hits: list[str] = []

    def openalex(request: Request) -> Reply:
        hits.append(request.path)
        headers = {"Content-Type": "application/json", "X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "0",
                   "X-RateLimit-Credits-Used": "1", "X-RateLimit-Reset": "3600"}
        return Reply(200, b'{"meta": {"count": 0}, "results": []}', headers)

    with LoopbackHost("127.0.0.1", {"*": openalex}) as oa, LoopbackHost("127.0.0.1", {"*": Reply(404, b"no")}) as dead:
        endpoints = {name: dead.base_url for name in ("unpaywall", "crossref", "europepmc", "ncbi_idconv", "ncbi_eutils",
                                                      "arxiv", "doi")}
        endpoints["openalex"] = oa.base_url
        with Retriever(email="tester@uni.example", out_dir=tmp_path, endpoints=endpoints, progress=False, verbosity=0,
                       cache=False, http_options=FAST, sources=["openalex"]) as r:
            frame = r.download([f"10.5555/bench.{i}" for i in range(120)])
            left = r.domain_status().set_index("host").loc[host_key(oa.base_url), "credits_left"]
        from paperfetch.http.hosts import host_limiter

        host_limiter(oa.base_url).release()
    assert len(hits) == 1 and left == 0
    assert frame["status"].tolist() == ["not_found"] * 50 + ["host_held"] * 70


def test_a_per_second_window_spent_is_a_short_quiet_hold_not_the_budget_warning():
    window = CaseInsensitiveDict({"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1"})
    facts, notices = policy.observe_response(HostFacts(), SETTINGS, status=200, headers=window, now=NOW)
    assert facts.hold_until == NOW + 1 and notices == ()  # the next request waits a second: nothing to warn about
    refused, notices = policy.observe_response(HostFacts(), SETTINGS, status=429, headers=window, now=NOW)
    assert refused.hold_until == NOW + 1 and [n.kind for n in notices] == ["hold"] and refused.breaker_failures == 0


def test_pmcs_403_to_a_script_is_a_suppressed_row_that_names_pmcs_bot_check(tmp_path):
    pdf = "https://pmc.ncbi.nlm.nih.gov/articles/PMC8562558/pdf/fnins-15-123.pdf"
    location = {"url": pdf, "url_for_pdf": pdf, "host_type": "repository", "license": "cc-by", "version": "publishedVersion"}
    answer = {"doi": "10.3389/fnins.2021.123", "is_oa": True, "oa_status": "green", "best_oa_location": location,
              "oa_locations": [location], "title": "Fetal neuroimaging updates", "year": 2021}
    session, adapter = scripted_session({
        "https://api.unpaywall.org/v2/10.3389%2Ffnins.2021.123": Reply(200, json.dumps(answer), {"Content-Type": "application/json"}),
        pdf: Reply(403, PMC_403, {"Content-Type": "text/html; charset=UTF-8"}),
    })
    client = HttpClient(session=session, registry=HostRegistry(), max_retries=0)
    with Retriever(email="tester@uni.example", out_dir=tmp_path, http=client, progress=False, verbosity=0, cache=False,
                   sources=["unpaywall"]) as r:
        frame = r.download(["10.3389/fnins.2021.123"])
    row = frame.iloc[0]
    assert row["status"] == "host_suppressed" and "PMC's bot check" in row["error"], row.to_dict()
    assert pdf in [url for _, url in adapter.calls] and not list(tmp_path.glob("*.pdf"))


@pytest.mark.parametrize(("body", "content_type"), [
    (b'{"error": "not found"}', "application/json;charset=UTF-8"),  # an API's answer to /robots.txt
    (b"<!DOCTYPE html><html><body>Welcome</body></html>", "text/html"),  # a web page's
    (b'  {"hitCount": 0}', ""),                                          # JSON by its content, no type said
    (b"<html><body>User-agent: *\nDisallow: /</body></html>", ""),       # HTML by its content
    (b"%PDF-1.4\x00\x01binary", "application/octet-stream"),             # binary
])
def test_a_robots_txt_that_is_not_text_is_no_robots_txt(body, content_type):
    from paperfetch.http.hosts import robots_of, with_robots
    from paperfetch.http.robots import RobotsRules, RobotsStatus

    rules = RobotsRules.parse(body, fetched_at=NOW, expires_at=NOW + 86400, content_type=content_type)
    assert rules.status is RobotsStatus.UNAVAILABLE and "not a robots.txt" in rules.detail
    assert rules.can_fetch("https://a.example/private/x", "paperfetch") and rules.crawl_delay("paperfetch", 60) is None
    stored = robots_of(with_robots(HostFacts("a.example"), rules))  # kept as no robots.txt
    assert stored is not None and stored.status is RobotsStatus.UNAVAILABLE and stored.text == ""
    # a body another version stored as parsed reads as no robots.txt again
    old = with_robots(HostFacts("a.example"), replace(rules, status=RobotsStatus.PARSED, text=body.decode("latin-1")))
    assert robots_of(old).status is RobotsStatus.UNAVAILABLE
    text = RobotsRules.parse(b"User-agent: *\nCrawl-delay: 2\n", fetched_at=NOW, expires_at=NOW + 1, content_type="text/plain")
    assert text.status is RobotsStatus.PARSED and text.crawl_delay("paperfetch", 60) == 2


class _Lookup:
    """A batch's API lookup as the Retriever runs one: dispatched by the web client's scheduler, sent by the API client."""

    def __init__(self, api: HttpClient, url: str) -> None:
        self.api, self.url, self.error = api, url, None

    def advance(self) -> None:
        self.api.get(self.url)
        self.url = None


def test_a_documented_apis_lookups_keep_its_interval_after_a_pdf_from_its_host():
    """One host serving an API (documented interval) and PDFs, its /robots.txt answered as JSON: the API's lookups
    take as long after a PDF was fetched from the host (robots.txt read by the web client) as before, in the
    default SQLite host state the Retriever's two clients share (measured on their fake clock)."""
    from paperfetch.http.scheduler import HostScheduler

    interval, lookups = 0.1, 8
    routes = {"/robots.txt": Reply(200, b'{"errCode": 404, "errMsg": "not found"}', {"Content-Type": "application/json"}),
              "/rest/search": Reply(200, b'{"hitCount": 0}', {"Content-Type": "application/json"}),
              "/pdf/PMC1.pdf": Reply(200, b"%PDF-1.4\n%%EOF\n", {"Content-Type": "application/pdf"})}
    clock = FakeClock()
    with LoopbackHost("127.0.0.1", routes) as host:
        key = host_key(host.base_url)
        # the default store, "sqlite" (in the test's own user cache dir); rate_limit 1-3 s as by default
        web = HttpClient(clock=clock, state="sqlite", respect_robots_txt=True, host_intervals={key: interval})
        api = HttpClient.from_config(web.config.replace(respect_robots_txt=False), session=web.session, clock=clock,
                                     state="sqlite")
        assert api.store is web.store and "sqlite" in web.store.name.lower()

        def batch() -> float:
            start = clock.monotonic()
            HostScheduler(web, workers=1).run([_Lookup(api, host.url(f"/rest/search?q={i}")) for i in range(lookups)])
            return clock.monotonic() - start

        before = batch()
        clock.advance(10.0)
        assert web.get(host.url("/pdf/PMC1.pdf")).status_code == 200
        clock.advance(10.0)
        after = batch()
        robots = web.snapshot(host.base_url).robots
        web.close()
        api.close()
    assert before == pytest.approx((lookups - 1) * interval, rel=0.1)
    assert after == pytest.approx(before, rel=0.1), (before, after)
    assert robots == "unavailable" and host.hits("/robots.txt") == 1
