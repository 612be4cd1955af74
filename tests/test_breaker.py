"""The per-host circuit breaker and the learned interval: policy tables, then the transport, on a fake clock."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
import requests

from paperfetch import FakeClock, HttpClient, NetworkError, RateLimited, is_synthetic
from paperfetch.http import policy
from paperfetch.http.config import TransportConfig
from paperfetch.http.retry import Retry
from paperfetch.state.base import BreakerState, HostFacts
from paperfetch.testing import Reply, scripted_session

NOW = 1_700_000_000.0
S = TransportConfig(breaker_failures=3)
A = "https://a.example"
B = "https://b.example"


def fail(facts, status=503, headers=None, now=NOW, settings=S, gap_s=None):
    return policy.observe_response(facts, settings, status=status, headers=headers or {}, now=now, gap_s=gap_s)[0]


def ok(facts, now=NOW, settings=S, floor_s=0.0):
    return policy.observe_response(facts, settings, status=200, headers={}, now=now, gap_s=1.0, floor_s=floor_s)[0]


def decide(facts, now=NOW, allowance=300.0, pace=policy.Pace()):
    return policy.decide(facts, pace, S, host="a.example", now=now, mono=0.0, allowance=allowance)


# ---------------------------------------------------------------------- breaker: tables
@pytest.mark.parametrize(
    "statuses, state, failures",
    [
        ([503], BreakerState.CLOSED, 1),
        ([503, 503], BreakerState.CLOSED, 2),
        ([503, 503, 503], BreakerState.OPEN, 3),
        ([429, 500, 504], BreakerState.OPEN, 3),
        ([503, 503, 200, 503], BreakerState.CLOSED, 1),   # a success in between starts the count again
        ([503, 503, 404, 503], BreakerState.CLOSED, 1),   # the host answered: a 404 is not its failure
        ([503, 503, 403], BreakerState.CLOSED, 0),
    ],
)
def test_consecutive_failures_open_the_breaker(statuses, state, failures):
    facts = HostFacts()
    for status in statuses:
        facts = fail(facts, status) if status != 200 else ok(facts)
    assert (facts.breaker_state, facts.breaker_failures) == (state, failures)


@pytest.mark.parametrize(
    "headers, expected_period",
    [
        ({"Retry-After": "30"}, 30.0),  # max(Retry-After, backoff)
        ({}, 4.0),                      # backoff after three 503s: 1, 2, 4
        ({"Retry-After": "1"}, 4.0),
    ],
)
def test_the_breaker_opens_for_the_larger_of_retry_after_and_backoff(headers, expected_period):
    facts = HostFacts()
    for _ in range(3):
        facts = fail(facts, 503, headers)
    assert facts.breaker_state is BreakerState.OPEN
    assert facts.breaker_period_s == expected_period
    assert facts.breaker_open_until == NOW + expected_period


def test_open_breaker_decisions_then_one_probe_that_closes_or_reopens_with_a_doubled_period():
    facts = HostFacts()
    for _ in range(3):
        facts = fail(facts, 503, {"Retry-After": "30"})
    # open: a call that may wait 300 s waits; one that may not is answered without a request
    assert decide(facts, now=NOW + 10).verdict is policy.Verdict.WAIT
    assert decide(facts, now=NOW + 10).seconds == pytest.approx(20)
    assert decide(facts, now=NOW + 10, allowance=5).verdict is policy.Verdict.OPEN
    # the period is over: the next request is the probe
    d = decide(facts, now=NOW + 30)
    assert (d.verdict, d.probe) == (policy.Verdict.PROCEED, True)
    probing = policy.begin_probe(facts)
    assert probing.breaker_state is BreakerState.HALF_OPEN
    assert decide(probing, now=NOW + 30, pace=policy.Pace(probing=True)).verdict is policy.Verdict.BUSY
    # the probe fails: open again for twice the period
    reopened = fail(probing, 503, now=NOW + 31)
    assert (reopened.breaker_state, reopened.breaker_period_s, reopened.breaker_open_until) == (BreakerState.OPEN, 60.0, NOW + 91)
    # the probe succeeds: closed, the count starts again
    closed = ok(probing, now=NOW + 31)
    assert (closed.breaker_state, closed.breaker_failures, closed.breaker_open_until) == (BreakerState.CLOSED, 0, None)


@pytest.mark.parametrize("unreachable, verdict", [(True, policy.Verdict.OPEN), (False, policy.Verdict.WAIT)])
def test_network_failures_open_the_breaker_and_an_unreachable_host_is_not_waited_for(unreachable, verdict):
    facts = HostFacts()
    for _ in range(3):
        facts, _ = policy.observe_error(facts, S, error="ConnectionError", now=NOW, unreachable=unreachable)
    assert facts.breaker_state is BreakerState.OPEN and facts.breaker_period_s == (1.0 if unreachable else 4.0)
    assert policy.unreachable(facts) is unreachable
    assert decide(facts, now=NOW + 0.5).verdict is verdict


def test_breaker_failures_zero_disables_the_breaker():
    off = TransportConfig(breaker_failures=0)
    facts = HostFacts()
    for _ in range(10):
        facts = fail(facts, 503, settings=off)
    assert facts.breaker_state is BreakerState.CLOSED and facts.breaker_failures == 10


# ---------------------------------------------------------------------- learned interval: tables
@pytest.mark.parametrize(
    "status, headers, gap_s, before, expected",
    [
        (429, {"Retry-After": "1"}, 0.2, 0.0, 1.2),      # the refused gap plus Retry-After
        (429, {"Retry-After": "1"}, 0.2, 2.0, 2.0),      # never lowered by a 429
        (429, {}, 1.0, 0.0, 2.0),                        # no header: twice the refused gap
        (429, {}, 1.0, 3.0, 6.0),                        # ... or twice what was learned
        (429, {}, 1.0, 40.0, 60.0),                      # capped
        (503, {"Retry-After": "2"}, 0.5, 0.0, 2.5),
        (503, {}, 0.5, 0.0, 0.0),                        # a 503 without a wait teaches nothing
        (429, {"Retry-After": "1"}, None, 0.0, 0.0),     # no previous request: no refused gap
        (503, {"Retry-After": "3600"}, 0.5, 0.0, 0.0),   # an outage, not a pace: the hold keeps it
    ],
)
def test_a_refusal_raises_the_learned_interval(status, headers, gap_s, before, expected):
    facts = replace(HostFacts(), learned_interval_s=before)
    after = fail(facts, status, headers, gap_s=gap_s)
    assert after.learned_interval_s == pytest.approx(expected)


def test_the_learned_interval_decays_after_a_run_of_successes_and_never_below_the_floor():
    from paperfetch import defaults

    facts = replace(HostFacts(), learned_interval_s=8.0)
    runs = defaults.LEARN_DECAY_SUCCESSES
    seen = []
    for _ in range(3 * runs):
        facts = ok(facts, floor_s=5.9)
        seen.append(facts.learned_interval_s)
    step = 1.0 - defaults.LEARN_DECAY_FRACTION
    assert seen[runs - 2] == 8.0 and seen[runs - 1] == pytest.approx(8.0 * step)  # one run of successes: one step down
    assert seen[2 * runs - 1] == pytest.approx(8.0 * step * step)
    assert seen[-1] == 0.0  # the next step would fall below the floor: dropped


def test_the_learned_interval_is_a_floor_of_the_delay_and_learning_can_be_disabled():
    facts = replace(HostFacts(), learned_interval_s=1.6)
    assert policy.delay_range(facts, S, "a.example").low == 1.6
    assert policy.delay_range(facts, TransportConfig(learn_interval=False), "a.example") is None


# ---------------------------------------------------------------------- retry value
def test_retry_increment_returns_a_new_policy_with_its_history():
    r0 = Retry(total=2)
    r1 = r0.increment("u", status=503, wait_s=1.0)
    r2 = r1.increment("u", error="ConnectTimeout", wait_s=2.0)
    assert (r0.attempts, r1.attempts, r2.attempts) == (0, 1, 2)
    assert (r1.exhausted, r2.exhausted, r2.waited_s) == (False, True, 3.0)
    assert [a.status for a in r2.history] == [503, None] and r2.history[1].error == "ConnectTimeout"
    assert r0.network_wait() == 1.0 and r1.network_wait() == 2.0


# ---------------------------------------------------------------------- the transport
def make(routes, **kwargs):
    clock = kwargs.pop("clock", None) or FakeClock()
    session, adapter = scripted_session(routes, clock)
    kwargs.setdefault("rng", random.Random(7))
    kwargs.setdefault("pacing_margin_s", 0.0)
    return HttpClient(session=session, clock=clock, **kwargs), adapter, clock


def test_failures_count_across_urls_and_an_open_host_is_answered_without_a_request():
    routes = {f"{A}/{i}": Reply(503, headers={"Retry-After": "30"}) for i in range(5)}
    client, adapter, clock = make(routes, max_retries=0, max_retry_after_s=5)
    for i in range(3):
        assert client.get(f"{A}/{i}").status_code == 503
        client.host_limiter(A).overwrite(lambda f: replace(f, hold_until=None))  # only the breaker may stop them
    assert len(adapter.calls) == 3
    held = client.get(f"{A}/3")
    assert is_synthetic(held) == "held" and held.status_code == 503 and held.headers["Retry-After"] == "30"
    with pytest.raises(RateLimited):
        client.fetch(f"{A}/4")
    assert len(adapter.calls) == 3
    snap = client.snapshot(A)
    assert (snap.breaker, snap.failures) == ("open", 3)
    assert snap.breaker_open_until.timestamp() == pytest.approx(clock.time() + 30)
    frame = client.domain_status().set_index("host")
    assert frame.loc["a.example", "breaker"] == "open"


def test_a_breaker_past_its_open_period_is_shown_as_probe_allowed_not_open():
    from paperfetch.dashboard.tables import breaker_cell

    client, _adapter, clock = make({}, max_retries=0)
    for host, until in (("http://lapsed.example/", -120.0), ("http://open.example/", 30.0)):
        client.host_limiter(host).update(
            lambda f, until=until: replace(f, breaker_state=BreakerState.OPEN, breaker_failures=3, breaker_open_until=clock.time() + until))
    assert client.snapshot("http://lapsed.example/").breaker == "half_open"  # the next request is the probe
    assert client.snapshot("http://open.example/").breaker == "open"
    frame = client.domain_status().set_index("host")
    assert frame.loc["lapsed.example", "state"] == "ok" and frame.loc["open.example", "state"] == "OPEN BREAKER"
    assert breaker_cell("half_open", 3, frame.loc["lapsed.example", "breaker_open_until"]) == "probe allowed (3 failed)"
    assert breaker_cell("open", 3, frame.loc["open.example", "breaker_open_until"]).startswith("open → ")


def test_a_probe_after_the_open_period_closes_the_breaker_on_success():
    routes = {f"{A}/x": [Reply(503), Reply(503), Reply(503), Reply(200)]}
    client, adapter, clock = make(routes, max_retries=3)
    assert client.get(f"{A}/x").status_code == 200
    # backoff 1, 2, then the breaker opens for 4 s after the third 503; the fourth request is the probe
    assert [round(t - adapter.calls[0][0], 3) for t, _ in adapter.calls] == [0.0, 1.0, 3.0, 7.0]
    assert client.snapshot(A).breaker == "closed"


def test_an_unreachable_host_costs_three_attempts_then_answers_at_once():
    def refused(_request):
        raise requests.ConnectionError("NewConnectionError: [Errno 111] Connection refused")

    client, adapter, clock = make({f"{A}/x": refused, f"{A}/y": refused})
    with pytest.raises(NetworkError):
        client.fetch(f"{A}/x")
    # refused in milliseconds: asked again after 0.1 and 0.2 s, then the breaker opened: no more waiting
    assert len(adapter.calls) == 3 and clock.sleeps == [0.1, 0.2]
    with pytest.raises(NetworkError, match="unreachable"):
        client.fetch(f"{A}/y")
    with pytest.raises(requests.ConnectionError, match="unreachable"):
        client.get(f"{A}/y")
    assert len(adapter.calls) == 3 and clock.sleeps == [0.1, 0.2]


def test_a_429_teaches_the_gap_the_host_enforces():
    # the host allows one request per 1.5 s and says so only with 429s without a header
    last = [None]

    def strict(_request):
        now = clock.monotonic()
        if last[0] is not None and now - last[0] < 1.5:
            return Reply(429)
        last[0] = now
        return Reply(200)

    clock = FakeClock()
    client, adapter, _ = make({f"{A}/{i}": strict for i in range(10)}, clock=clock, delay_min_s=1.0, delay_max_s=1.0,
                              default_retry_after_s=2.0)
    statuses = [client.get(f"{A}/{i}").status_code for i in range(10)]
    assert statuses == [200] * 10
    refused = len(adapter.calls) - 10
    assert refused == 1
    assert client.snapshot(A).learned_interval_s == pytest.approx(2.0)
    assert client.snapshot(A).delay_min_s == pytest.approx(2.0)


# ---------------------------------------------------------------------- the scheduler
def test_a_batch_defers_an_open_host_then_ends_its_items_when_the_next_probe_is_past_the_budget():
    routes = {**{f"{A}/{i}": Reply(503, headers={"Retry-After": "30"}) for i in range(50)},
              **{f"{B}/{i}": Reply(200) for i in range(5)}}
    client, adapter, clock = make(routes, max_host_wait_s=120)
    t0 = clock.monotonic()
    urls = [f"{A}/{i}" for i in range(50)] + [f"{B}/{i}" for i in range(5)]
    results = client.get_many(urls)
    a_calls = [t for t, u in adapter.calls if u.startswith(A)]
    # 503s at 0, 30, 60 (the breaker opens for 30 s), the probe at 90 reopens it for 60 s: 150 s is past the budget
    assert [round(t - t0) for t in a_calls] == [0, 30, 60, 90]
    assert all(r.status_code == 503 for r in results[:50])
    assert sum(is_synthetic(r) == "held" for r in results[:50]) == 49
    assert [r.status_code for r in results[50:]] == [200] * 5
    assert clock.monotonic() - t0 < 100


def test_without_the_breaker_the_same_batch_asks_for_every_url():
    routes = {f"{A}/{i}": Reply(503, headers={"Retry-After": "30"}) for i in range(3)}
    client, adapter, clock = make(routes, breaker_failures=0, max_retries=1)
    client.get_many([f"{A}/{i}" for i in range(3)])
    assert len(adapter.calls) == 6


def test_a_down_host_with_robots_costs_four_requests_and_every_url_is_answered():
    # the figure (a) of benchmarks/adverse.py on the fake clock: robots.txt is answered 503 too
    routes = {"/robots.txt": Reply(503, headers={"Retry-After": "30"}),
              **{f"{A}/{i}": Reply(503, headers={"Retry-After": "30"}) for i in range(200)}}
    client, adapter, clock = make(routes, respect_robots_txt=True)
    t0 = clock.monotonic()
    results = client.get_many([f"{A}/{i}" for i in range(200)])
    assert [round(t - t0) for t, _ in adapter.calls] == [0, 30, 60, 90]  # robots.txt, then one URL and its probe
    assert all(r.status_code == 503 for r in results)
    assert clock.monotonic() - t0 < 100


def test_a_refused_host_says_connection_refused_and_since_when_never_dns(tmp_path):
    """Several papers on a port that refuses connections, in two batches (the second meets only the open breaker):
    the host's row in domain_status(), the dashboard's and every outcome's reason say what happened first and
    since when, never a DNS failure and never a nested repr."""
    import json
    import re
    import socket

    from paperfetch.http.hosts import host_key
    from paperfetch.testing import LoopbackHost, Request
    from tests._quick import retriever

    with socket.socket() as closed:  # a port nothing listens on: the connection is refused
        closed.bind(("127.0.0.71", 0))
        dead = f"http://127.0.0.71:{closed.getsockname()[1]}"

    def unpaywall(request: Request) -> Reply:
        doi = request.path.split("/v2/", 1)[1]
        pdf = f"{dead}/{doi.rsplit('.', 1)[-1]}.pdf"
        location = {"url": pdf, "url_for_pdf": pdf, "host_type": "repository", "license": "cc-by", "version": "publishedVersion"}
        answer = {"doi": doi, "is_oa": True, "best_oa_location": location, "oa_locations": [location], "title": "T"}
        return Reply(200, json.dumps(answer), {"Content-Type": "application/json"})

    refused = re.compile(r"connection refused since \d\d:\d\d UTC", re.IGNORECASE)
    with LoopbackHost("127.0.0.1", {"*": unpaywall}) as service:
        with retriever(tmp_path, {"unpaywall": service.base_url}, sources=["unpaywall"]) as r:
            frames = [r.download([f"10.5555/refused.{i}" for i in batch]) for batch in (range(4), range(4, 8))]
            row = r.domain_status().set_index("host").loc[host_key(dead)]
            shown = r.run_snapshot().host(host_key(dead))
    reasons = [reason for frame in frames for reason in frame["reason"]]
    assert all(refused.search(reason) for reason in reasons), reasons
    assert not any("DNS" in reason or "ConnectionError" in reason or "unreachable" in reason for reason in reasons), reasons
    assert row["state"] == "UNREACHABLE" and refused.search(row["breaker_reason"]), row.to_dict()
    since = {refused.search(text).group(0) for text in [*reasons, row["breaker_reason"]]}
    assert len(since) == 1, since  # the first failure's time, kept
    assert shown is not None and shown.unreachable == "refused"  # the dashboard: UNREACHABLE / connection refused
