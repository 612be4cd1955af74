"""HttpClient on a fake clock and a scripted transport: no real waiting, no network."""

from __future__ import annotations

import logging
import random

import pandas as pd
import pytest
import requests

from paperfetch import (
    DisallowedByRobots,
    FakeClock,
    HostSuppressed,
    HttpClient,
    InvalidURL,
    NetworkError,
    NotFoundError,
    Outcome,
    RateLimited,
    RequestTimeout,
    ServiceError,
    TooManyRedirects,
    defaults,
    is_synthetic,
)
from paperfetch.http.events import EventKind
from paperfetch.http.hosts import HostRegistry
from paperfetch.testing import Reply, scripted_session

A = "https://a.example"
B = "https://b.example"


def make(routes, **kwargs):
    clock = kwargs.pop("clock", None) or FakeClock()
    session, adapter = scripted_session(routes, clock)
    kwargs.setdefault("rng", random.Random(7))
    kwargs.setdefault("pacing_margin_s", 0.0)  # the policy tables, exactly
    client = HttpClient(session=session, clock=clock, **kwargs)
    return client, adapter, clock


def starts(adapter, prefix=""):
    return [t for t, u in adapter.calls if u.startswith(prefix) and not u.endswith("/robots.txt")]


def gaps(times):
    return [b - a for a, b in zip(times, times[1:])]


# ---------------------------------------------------------------- defaults and contract
def test_constructor_defaults_follow_pypaperretriever_with_our_user_agent():
    client = HttpClient()
    assert client.user_agent.startswith("paperfetch/")
    assert (client.respect_robots_txt, client.delay_min_s, client.delay_max_s) == (False, None, None)
    assert (client.honor_retry_after, client.suppress_on_403, client.max_retries) == (True, True, 3)
    assert (client.default_retry_after_s, client.max_retry_after_s) == (60.0, 300.0)
    assert (client.backoff_base_s, client.backoff_multiplier, client.backoff_max_s, client.backoff_decay_s) == (1.0, 2.0, 300.0, 1.0)
    assert (client.rate_limit_min_s, client.rate_limit_max_s, client.verbosity, client.polite_mode) == (1.0, 3.0, 1, True)
    assert client.timeout is not None


def test_only_delay_min_gives_a_range_up_to_three_times_it():
    client = HttpClient(delay_min_s=2.0)
    assert (client.delay_min_s, client.delay_max_s) == (2.0, 6.0)


def test_default_client_sends_user_agent_and_a_timeout():
    seen = {}

    def answer(request):
        seen["ua"] = request.headers["User-Agent"]
        return Reply(200, b"ok")

    client, adapter, _ = make({f"{A}/x": answer})
    assert client.get(f"{A}/x").status_code == 200
    assert seen["ua"].startswith("paperfetch/")


def test_get_returns_any_http_status_without_raising():
    client, _, _ = make({f"{A}/missing": Reply(404), f"{A}/bad": Reply(400)})
    assert client.get(f"{A}/missing").status_code == 404
    assert client.get(f"{A}/bad").status_code == 400


# ---------------------------------------------------------------- pacing
def test_delay_range_spaces_requests_to_one_host_and_not_across_hosts():
    client, adapter, clock = make({f"{A}/1": Reply(200), f"{B}/1": Reply(200)}, delay_min_s=1.0, delay_max_s=5.0)
    for _ in range(5):
        client.get(f"{A}/1")
    client.get(f"{B}/1")
    a_gaps = gaps(starts(adapter, A))
    assert len(a_gaps) == 4 and all(1.0 <= g <= 5.0 for g in a_gaps)
    b_start = starts(adapter, B)[0]
    assert b_start == starts(adapter, A)[-1]  # the other host did not wait for A's delay


def test_first_request_to_a_host_is_not_delayed():
    client, adapter, clock = make({f"{A}/1": Reply(200)}, delay_min_s=2.0)
    client.get(f"{A}/1")
    assert clock.slept == 0


def test_per_host_interval_paces_arxiv_at_three_seconds_by_default():
    client, adapter, _ = make({"https://export.arxiv.org/api/query": Reply(200)})
    for _ in range(3):
        client.get("https://export.arxiv.org/api/query")
    assert gaps(starts(adapter)) == [3.0, 3.0]


def test_host_intervals_are_configurable():
    client, adapter, _ = make({f"{A}/x": Reply(200)}, host_intervals={"a.example": 0.5})
    for _ in range(3):
        client.get(f"{A}/x")
    assert gaps(starts(adapter)) == [0.5, 0.5]


# ---------------------------------------------------------------- robots.txt
ROBOTS = "User-agent: *\nCrawl-delay: 0.5\nDisallow: /private\nAllow: /private/open*\n"


def test_fractional_crawl_delay_is_kept_and_paces_the_host():
    client, adapter, _ = make({f"{A}/robots.txt": Reply(200, ROBOTS), f"{A}/p": Reply(200)}, respect_robots_txt=True)
    for _ in range(4):
        client.get(f"{A}/p")
    # robots.txt itself is the first request; each later start is >= 0.5 s after the previous
    all_starts = [t for t, _ in adapter.calls]
    assert gaps(all_starts) == [0.5, 0.5, 0.5, 0.5]


def test_robots_disallow_gives_none_from_get_and_a_typed_error_from_fetch():
    client, adapter, _ = make({f"{A}/robots.txt": Reply(200, ROBOTS)}, respect_robots_txt=True)
    assert client.get(f"{A}/private/x") is None
    with pytest.raises(DisallowedByRobots, match="disallows"):
        client.fetch(f"{A}/private/y")
    assert adapter.urls() == [f"{A}/robots.txt"]  # fetched once, nothing else sent


def test_robots_longest_match_allows_a_more_specific_rule():
    client, adapter, _ = make({f"{A}/robots.txt": Reply(200, ROBOTS), f"{A}/private/open-1": Reply(200)}, respect_robots_txt=True)
    assert client.get(f"{A}/private/open-1").status_code == 200


def test_robots_is_cached_per_host_and_refetched_after_its_time_to_live():
    client, adapter, clock = make({f"{A}/robots.txt": Reply(200, "User-agent: *\nAllow: /\n"), f"{A}/p": Reply(200)},
                                  respect_robots_txt=True, robots_cache_ttl_s=10 * 86400)
    for _ in range(5):
        client.get(f"{A}/p")
    assert adapter.urls().count(f"{A}/robots.txt") == 1
    clock.advance(86400 + 1)  # the TTL is capped at 24 h whatever was asked
    client.get(f"{A}/p")
    assert adapter.urls().count(f"{A}/robots.txt") == 2


def test_missing_robots_txt_allows_everything_with_the_fallback_delay():
    client, adapter, _ = make({f"{A}/robots.txt": Reply(404), f"{A}/p": Reply(200)}, respect_robots_txt=True)
    client.get(f"{A}/p")
    client.get(f"{A}/p")
    assert 1.0 <= gaps(starts(adapter))[0] <= 3.0  # rate_limit_min_s..rate_limit_max_s


@pytest.mark.parametrize("robots_reply", [Reply(500), Reply(raise_exc=requests.ConnectionError("refused"))])
def test_unreachable_robots_is_permissive_by_default(robots_reply):
    client, adapter, _ = make({f"{A}/robots.txt": robots_reply, f"{A}/p": Reply(200)}, respect_robots_txt=True)
    assert client.get(f"{A}/p").status_code == 200


@pytest.mark.parametrize("robots_reply", [Reply(503), Reply(raise_exc=requests.ConnectionError("refused"))])
def test_rfc9309_option_disallows_while_robots_is_unreachable(robots_reply):
    client, adapter, clock = make({f"{A}/robots.txt": robots_reply, f"{A}/p": Reply(200)},
                                  respect_robots_txt=True, robots_unreachable="disallow", max_retries=0)
    assert client.get(f"{A}/p") is None
    assert f"{A}/p" not in adapter.urls()


def test_hostile_crawl_delay_is_capped():
    client, adapter, _ = make({f"{A}/robots.txt": Reply(200, "User-agent: *\nCrawl-delay: 86400\n"), f"{A}/p": Reply(200)},
                              respect_robots_txt=True, max_crawl_delay_s=60.0)
    client.get(f"{A}/p")
    client.get(f"{A}/p")
    assert gaps(starts(adapter)) == [60.0]


def test_request_rate_counts_as_a_crawl_delay():
    client, adapter, _ = make({f"{A}/robots.txt": Reply(200, "User-agent: *\nRequest-rate: 1/4s\n"), f"{A}/p": Reply(200)},
                              respect_robots_txt=True)
    client.get(f"{A}/p")
    client.get(f"{A}/p")
    assert gaps(starts(adapter)) == [4.0]


def test_only_the_first_500_kib_of_robots_txt_is_read():
    padding = "# " + "x" * 1000 + "\n"
    body = "User-agent: *\nAllow: /\n" + padding * (defaults.MAX_ROBOTS_BYTES // len(padding) + 10) + "User-agent: *\nDisallow: /\n"
    client, adapter, _ = make({f"{A}/robots.txt": Reply(200, body), f"{A}/p": Reply(200)}, respect_robots_txt=True)
    assert client.get(f"{A}/p").status_code == 200  # the Disallow beyond 500 KiB is ignored
    assert client.registry.limiter(A).robots.truncated


# ---------------------------------------------------------------- 429, Retry-After, holds
def test_429_with_retry_after_waits_then_retries():
    client, adapter, clock = make({f"{A}/x": [Reply(429, headers={"Retry-After": "7"}), Reply(200, b"ok")]})
    response = client.get(f"{A}/x")
    assert response.status_code == 200
    assert 7.0 in clock.sleeps
    assert len(adapter.calls) == 2


def test_429_without_headers_waits_the_default_and_grows_backoff():
    client, adapter, clock = make({f"{A}/x": [Reply(429), Reply(200)]}, default_retry_after_s=60.0)
    client.get(f"{A}/x")
    assert 60.0 in clock.sleeps
    assert client.backoff_delays == {}  # grew to 1 s, then a 2xx decayed it by 1 s to zero


def test_persistent_429_returns_the_final_429_after_max_retries():
    client, adapter, clock = make({f"{A}/x": Reply(429, headers={"Retry-After": "1"})}, max_retries=3)
    response = client.get(f"{A}/x")
    assert response.status_code == 429 and not is_synthetic(response)
    assert len(adapter.calls) == 4


def test_honor_retry_after_false_returns_the_429_as_is():
    client, adapter, _ = make({f"{A}/x": Reply(429, headers={"Retry-After": "1"})}, honor_retry_after=False)
    assert client.get(f"{A}/x").status_code == 429
    assert len(adapter.calls) == 1


def test_a_long_retry_after_becomes_a_hold_and_the_call_returns_at_once():
    client, adapter, clock = make({f"{A}/x": Reply(503, headers={"Retry-After": "600"}), f"{A}/y": Reply(200)})
    first = client.get(f"{A}/x")
    assert first.status_code == 503 and not is_synthetic(first)
    assert clock.slept == 0  # not cut short and waited: the call ended
    second = client.get(f"{A}/y")
    assert is_synthetic(second) == "held"
    assert second.status_code == 503
    assert int(second.headers["Retry-After"]) == 600
    assert len(adapter.calls) == 1
    with pytest.raises(RateLimited) as info:
        client.fetch(f"{A}/y")
    assert info.value.held_until is not None and info.value.status_code == 503
    assert len(adapter.calls) == 1


def test_a_thousand_calls_to_a_held_host_send_nothing():
    client, adapter, _ = make({f"{A}/x": Reply(503, headers={"Retry-After": "30"})}, max_retry_after_s=5)
    for i in range(1000):
        client.get(f"{A}/x?i={i}")
    assert len(adapter.calls) == 1


def test_a_short_hold_is_waited_out_by_the_next_caller():
    registry = HostRegistry(FakeClock())
    clock = registry.clock
    c1, adapter, _ = make({f"{A}/x": [Reply(429, headers={"Retry-After": "20"}), Reply(200)]}, clock=clock, registry=registry,
                          max_retry_after_s=10)
    assert c1.get(f"{A}/x").status_code == 429  # 20 s > 10 s: this call gives up
    c2, adapter2, _ = make({f"{A}/x": Reply(200)}, clock=clock, registry=registry, max_retry_after_s=30)
    assert c2.get(f"{A}/x").status_code == 200  # 20 s <= 30 s: waited out, then sent
    assert 20.0 in clock.sleeps


def test_holds_are_shared_by_every_client_of_a_registry_and_released_by_hand():
    registry = HostRegistry(FakeClock())
    c1, _, _ = make({f"{A}/x": Reply(429, headers={"Retry-After": "3600"})}, clock=registry.clock, registry=registry)
    c2, adapter2, _ = make({f"{A}/x": Reply(200)}, clock=registry.clock, registry=registry)
    c1.get(f"{A}/x")
    assert c1.host_limiter(f"{A}/a") is c2.host_limiter(f"{A}/b")
    assert is_synthetic(c2.get(f"{A}/x")) == "held"
    c2.host_limiter(f"{A}/x").release()
    assert c2.get(f"{A}/x").status_code == 200
    assert len(adapter2.calls) == 1


def test_a_shorter_retry_after_never_shortens_a_hold():
    registry = HostRegistry(FakeClock())
    limiter = registry.limiter(A)
    now = registry.clock.monotonic()
    assert limiter.set_hold(now + 100, status=429, reason="long")
    assert not limiter.set_hold(now + 10, status=429, reason="short")
    assert limiter.hold_remaining(now) == 100


def test_max_elapsed_caps_the_waiting_of_one_call():
    client, adapter, clock = make({f"{A}/x": Reply(503, headers={"Retry-After": "10"})})
    with pytest.raises(RateLimited):
        client.fetch(f"{A}/x", max_elapsed=5)
    assert clock.slept == 0 and len(adapter.calls) == 1


def test_max_elapsed_allows_short_retries_within_the_budget():
    client, adapter, clock = make({f"{A}/x": [Reply(500), Reply(500), Reply(200)]})
    assert client.fetch(f"{A}/x", max_elapsed=10).status_code == 200
    assert clock.sleeps == [1.0, 2.0]  # backoff 1 s, then 2 s


def test_epoch_reset_header_sets_a_hold_until_that_time():
    clock = FakeClock()
    reset = int(clock.time()) + 900
    client, adapter, _ = make({f"{A}/x": Reply(429, headers={"X-RateLimit-Reset": str(reset)})}, clock=clock)
    client.get(f"{A}/x")
    assert client.host_limiter(A).hold_remaining(clock.monotonic()) == pytest.approx(900, abs=1)


# ---------------------------------------------------------------- backoff
def test_503_and_504_grow_backoff_and_successes_recover_it():
    client, adapter, clock = make({f"{A}/x": [Reply(503), Reply(504), Reply(503), Reply(200)], f"{A}/ok": Reply(200)})
    assert client.get(f"{A}/x").status_code == 200
    assert clock.sleeps == [1.0, 2.0, 4.0]
    assert client.backoff_delays == {"a.example": 3.0}  # 4 s, minus 1 s for the success
    client.get(f"{A}/ok")
    assert client.backoff_delays == {"a.example": 2.0}
    client.get(f"{A}/ok")
    client.get(f"{A}/ok")
    assert client.backoff_delays == {}


@pytest.mark.parametrize("breaker_failures", [3, 0])
def test_backoff_paces_later_requests_to_the_host(breaker_failures):
    client, adapter, clock = make({f"{A}/x": [Reply(503), Reply(503), Reply(503), Reply(503)], f"{A}/y": Reply(200)},
                                  max_retries=3, breaker_failures=breaker_failures)
    client.get(f"{A}/x")  # backoff 1, 2, 4, 8
    assert client.backoff_delays == {"a.example": 8.0}
    client.get(f"{A}/y")
    # with the breaker, the same gaps: it opens for the backoff (4 s, then 8 s after the failed probe)
    assert gaps(starts(adapter)) == [1.0, 2.0, 4.0, 8.0]
    assert clock.sleeps == [1.0, 2.0, 4.0, 8.0]


# ---------------------------------------------------------------- 403 suppression
def test_403_suppresses_the_host_and_later_requests_get_a_synthetic_403():
    client, adapter, _ = make({f"{A}/x": Reply(403)})
    assert client.get(f"{A}/x").status_code == 403
    again = client.get(f"{A}/other")
    assert again.status_code == 403 and is_synthetic(again) == "suppressed"
    assert len(adapter.calls) == 1
    assert "a.example" in client.suppressed_domains
    with pytest.raises(HostSuppressed):
        client.fetch(f"{A}/third")


def test_suppression_expires_and_the_host_is_tried_once_more():
    client, adapter, clock = make({f"{A}/x": [Reply(403), Reply(200)]}, suppress_403_ttl_s=60)
    client.get(f"{A}/x")
    clock.advance(61)
    assert client.get(f"{A}/x").status_code == 200
    assert len(adapter.calls) == 2


def test_redirector_is_exempt_and_the_answering_host_is_suppressed():
    client, adapter, _ = make({
        "https://doi.org/10.1/x": Reply(302, headers={"Location": f"{A}/article"}),
        f"{A}/article": Reply(403),
    })
    assert client.get("https://doi.org/10.1/x").status_code == 403
    assert set(client.suppressed_domains) == {"a.example"}


def test_403_with_retry_after_is_a_hold_not_a_ban():
    client, adapter, _ = make({f"{A}/x": Reply(403, headers={"Retry-After": "120"})}, max_retry_after_s=10)
    client.get(f"{A}/x")
    assert client.suppressed_domains == {}
    assert client.host_limiter(A).hold_remaining(client._clock.monotonic()) > 100


def test_suppress_on_403_false_keeps_asking():
    client, adapter, _ = make({f"{A}/x": Reply(403)}, suppress_on_403=False)
    client.get(f"{A}/x")
    client.get(f"{A}/x")
    assert len(adapter.calls) == 2


def test_exempt_redirectors_are_configurable():
    client, adapter, _ = make({f"{A}/x": Reply(403)}, suppression_exempt=["a.example"])
    client.get(f"{A}/x")
    assert client.suppressed_domains == {}


# ---------------------------------------------------------------- redirects
def test_each_redirect_hop_is_paced_by_its_own_host():
    client, adapter, clock = make({
        f"{A}/r": Reply(302, headers={"Location": f"{B}/final"}),
        f"{B}/final": Reply(200, b"done"),
    }, host_intervals={"b.example": 5.0})
    client.get(f"{B}/final")
    response = client.get(f"{A}/r")
    assert response.status_code == 200 and response.content == b"done"
    assert [r.status_code for r in response.history] == [302]
    assert 5.0 in clock.sleeps  # B's interval applied to the hop


def test_redirect_to_a_disallowed_path_is_not_followed():
    client, adapter, _ = make({
        f"{A}/robots.txt": Reply(404),
        f"{A}/r": Reply(301, headers={"Location": f"{B}/private/x"}),
        f"{B}/robots.txt": Reply(200, "User-agent: *\nDisallow: /private\n"),
    }, respect_robots_txt=True, rate_limit_min_s=0, rate_limit_max_s=0)
    assert client.get(f"{A}/r") is None
    assert f"{B}/private/x" not in adapter.urls()


def test_redirect_loop_is_a_typed_error_that_requests_users_also_catch():
    client, adapter, _ = make({
        f"{A}/1": Reply(302, headers={"Location": f"{A}/2"}),
        f"{A}/2": Reply(302, headers={"Location": f"{A}/1"}),
    })
    with pytest.raises(TooManyRedirects, match="loop"):
        client.fetch(f"{A}/1")
    with pytest.raises(requests.TooManyRedirects):
        client.get(f"{A}/1")


def test_redirect_chain_is_bounded():
    routes = {f"{A}/{i}": Reply(302, headers={"Location": f"{A}/{i + 1}"}) for i in range(20)}
    client, adapter, _ = make(routes, max_redirects=5)
    with pytest.raises(TooManyRedirects, match="more than 5"):
        client.get(f"{A}/0")
    assert len(adapter.calls) == 6


def test_only_http_and_https_are_requested():
    client, adapter, _ = make({f"{A}/r": Reply(302, headers={"Location": "ftp://files.example/x.pdf"})})
    with pytest.raises(InvalidURL, match="http and https"):
        client.get("file:///etc/passwd")
    with pytest.raises(InvalidURL):
        client.get(f"{A}/r")


# ---------------------------------------------------------------- fetch and classify
def test_fetch_maps_verdicts_to_typed_errors():
    client, adapter, _ = make({f"{A}/ok": Reply(200), f"{A}/gone": Reply(404), f"{A}/bad": Reply(400)})
    assert client.fetch(f"{A}/ok").status_code == 200
    with pytest.raises(NotFoundError) as info:
        client.fetch(f"{A}/gone")
    assert info.value.status_code == 404 and info.value.response is not None
    with pytest.raises(ServiceError) as info:
        client.fetch(f"{A}/bad")
    assert info.value.status_code == 400


def test_fetch_uses_the_callers_classify():
    def busy_404(response):
        return Outcome.RETRY if response.status_code == 404 else Outcome.OK

    client, adapter, clock = make({f"{A}/x": [Reply(404), Reply(200)]})
    assert client.fetch(f"{A}/x", classify=busy_404).status_code == 200
    assert len(adapter.calls) == 2


def test_network_errors_are_retried_then_raised_as_typed_errors_with_no_response():
    client, adapter, clock = make({f"{A}/x": Reply(raise_exc=requests.ConnectionError("reset"))}, network_retry_schedule="linear")
    with pytest.raises(NetworkError) as info:
        client.fetch(f"{A}/x")
    assert info.value.status_code is None and info.value.response is None
    # the third failure opens the breaker for the backoff (1, 2, 4 s): the fourth attempt, its probe,
    # waits out the last second of it after the linear retry wait of 3 s
    assert clock.sleeps == [1.0, 2.0, 3.0, 1.0]
    assert len(adapter.calls) == 4


def test_timeouts_become_request_timeout_and_get_raises_requests_own_exception():
    client, adapter, clock = make({f"{A}/x": Reply(raise_exc=requests.ReadTimeout("slow"))}, max_retries=1)
    with pytest.raises(RequestTimeout):
        client.fetch(f"{A}/x")
    with pytest.raises(requests.ReadTimeout):
        client.get(f"{A}/x")


def test_no_raw_requests_exception_reaches_a_fetch_caller():
    client, adapter, _ = make({f"{A}/x": Reply(raise_exc=requests.exceptions.ChunkedEncodingError("cut"))}, max_retries=0)
    with pytest.raises(NetworkError):
        client.fetch(f"{A}/x")


# ---------------------------------------------------------------- polite_mode=False
def test_polite_mode_off_bypasses_robots_retries_and_suppression():
    client, adapter, clock = make({
        f"{A}/robots.txt": Reply(200, "User-agent: *\nDisallow: /\n"),
        f"{A}/x": Reply(429, headers={"Retry-After": "5"}),
        f"{A}/f": Reply(403),
    }, polite_mode=False, respect_robots_txt=True, delay_min_s=5)
    assert client.get(f"{A}/x").status_code == 429
    client.get(f"{A}/f")
    client.get(f"{A}/f")
    assert f"{A}/robots.txt" not in adapter.urls()
    assert clock.slept == 0
    assert client.suppressed_domains == {}
    assert len(adapter.calls) == 3


# ---------------------------------------------------------------- events, status, logging, secrets
def test_events_cover_requests_holds_backoff_and_suppression():
    client, adapter, _ = make({
        f"{A}/x": Reply(503, headers={"Retry-After": "900"}),
        f"{B}/x": Reply(403),
    })
    events = []
    client.subscribe(events.append)
    client.get(f"{A}/x?email=me@uni.edu")
    client.get(f"{A}/y")
    client.get(f"{B}/x")
    kinds = [e.kind for e in events]
    for kind in (EventKind.REQUEST, EventKind.RESPONSE, EventKind.HOLD, EventKind.BACKOFF, EventKind.HELD, EventKind.SUPPRESS):
        assert kind in kinds
    assert all("me@uni.edu" not in (e.url or "") and "me@uni.edu" not in e.detail for e in events)


def test_a_failing_subscriber_does_not_break_requests():
    client, adapter, _ = make({f"{A}/x": Reply(200)})

    def broken(event):
        raise RuntimeError("listener bug")

    client.subscribe(broken)
    assert client.get(f"{A}/x").status_code == 200


def test_domain_status_is_one_row_per_host():
    client, adapter, clock = make({
        f"{A}/x": Reply(503, headers={"Retry-After": "900"}),
        f"{B}/x": Reply(403),
    }, delay_min_s=1, delay_max_s=2)
    client.get(f"{A}/x")
    client.get(f"{B}/x")
    status = client.domain_status().set_index("host")
    assert list(status.index) == ["a.example", "b.example"]
    assert status.loc["a.example", "backoff_s"] == 1.0
    assert status.loc["a.example", "hold_status"] == 503
    assert status.loc["a.example", "held_until"] == pd.Timestamp(clock.time() + 900, unit="s", tz="UTC")
    assert pd.isna(status.loc["b.example", "held_until"])
    assert bool(status.loc["b.example", "suppressed"]) and "403" in status.loc["b.example", "suppressed_reason"]
    assert status.loc["a.example", "delay_min_s"] == 1.0
    assert status.loc["b.example", "requests"] == 1


def test_errors_and_logs_never_show_secrets(caplog):
    client, adapter, _ = make({f"{A}/x": Reply(404)})
    with caplog.at_level(logging.DEBUG, logger="paperfetch"):
        with pytest.raises(NotFoundError) as info:
            client.fetch(f"{A}/x?email=me@uni.edu&api_key=s3cret")
    assert "me@uni.edu" not in str(info.value) and "s3cret" not in info.value.url
    assert "s3cret" not in caplog.text and "me@uni.edu" not in caplog.text


def test_the_logging_config_decides_not_a_per_instance_gate(caplog, capsys):
    # verbosity 0/1 set no level and add no handler; the records reach the caller's config.
    package = logging.getLogger("paperfetch")
    handlers, level = list(package.handlers), package.level
    client, adapter, _ = make({f"{A}/x": Reply(503, headers={"Retry-After": "900"})}, verbosity=0)
    assert (package.handlers, package.level) == (handlers, level)
    with caplog.at_level(logging.DEBUG, logger="paperfetch"):
        client.get(f"{A}/x")
    assert any(r.levelno == logging.WARNING and "a.example" in r.getMessage() for r in caplog.records)
    assert any(r.levelno == logging.INFO for r in caplog.records)
    assert capsys.readouterr().out == ""


def test_fake_clock_client_keeps_its_own_registry():
    client, _, _ = make({})
    assert client.registry is not HttpClient().registry


def test_pacing_margin_is_added_to_every_nonzero_gap_only():
    client, adapter, clock = make({f"{A}/x": Reply(200), f"{B}/x": Reply(200)}, host_intervals={"a.example": 1.0}, pacing_margin_s=0.002)
    for _ in range(3):
        client.get(f"{A}/x")
        client.get(f"{B}/x")
    assert gaps(starts(adapter, A)) == [pytest.approx(1.002), pytest.approx(1.002)]
    assert len(clock.sleeps) == 2  # B has no delay, so no margin either: only A's two requests waited


def test_robots_txt_redirect_is_followed_to_the_file_it_names():
    client, adapter, _ = make({
        f"{A}/robots.txt": Reply(301, headers={"Location": f"{B}/robots.txt"}),
        f"{B}/robots.txt": Reply(200, "User-agent: *\nDisallow: /private\n"),
        f"{A}/open": Reply(200),
    }, respect_robots_txt=True, rate_limit_min_s=0, rate_limit_max_s=0)
    assert client.get(f"{A}/private/x") is None
    assert client.get(f"{A}/open").status_code == 200


def test_robots_txt_redirect_loop_gives_up_after_five_hops_and_allows():
    client, adapter, _ = make({
        f"{A}/robots.txt": Reply(302, headers={"Location": f"{A}/robots.txt"}),
        f"{A}/p": Reply(200),
    }, respect_robots_txt=True, rate_limit_min_s=0, rate_limit_max_s=0)
    assert client.get(f"{A}/p").status_code == 200
    assert adapter.urls().count(f"{A}/robots.txt") == 6


def test_polite_mode_off_still_reports_network_errors_as_events():
    client, adapter, _ = make({f"{A}/x": Reply(raise_exc=requests.ConnectionError("refused"))}, polite_mode=False)
    events = []
    client.subscribe(events.append)
    with pytest.raises(requests.ConnectionError):
        client.get(f"{A}/x")
    assert [e.kind for e in events] == [EventKind.REQUEST, EventKind.NETWORK_ERROR]

# ---------------------------------------------------------------- a wall clock that steps during a hold
class _SteppingClock(FakeClock):
    """A fake clock whose wall time steps by *step_s* once, *after_s* into the first sleep of at least that long."""

    def __init__(self, step_s: float, after_s: float = 2.0) -> None:
        super().__init__()
        self.step_s, self.after_s, self.stepped = step_s, after_s, False

    def sleep(self, seconds: float) -> None:
        if not self.stepped and seconds >= self.after_s:
            self.stepped = True
            super().sleep(self.after_s)
            self.step_wall(self.step_s)
            super().sleep(seconds - self.after_s)
        else:
            super().sleep(seconds)


@pytest.mark.parametrize("step_s", [-3600.0, -30.0, 3600.0])
def test_a_hold_is_waited_out_on_the_monotonic_clock_whatever_the_wall_clock_does(step_s):
    clock = _SteppingClock(step_s)
    client, adapter, _ = make({f"{A}/x": [Reply(429, headers={"Retry-After": "5"}), Reply(200, b"ok")]}, clock=clock)
    start = clock.monotonic()
    assert client.get(f"{A}/x").status_code == 200
    assert clock.stepped and len(adapter.calls) == 2
    assert clock.monotonic() - start == pytest.approx(5.0, abs=1.0)  # the hold's length, not an hour more


def test_a_hold_set_again_after_it_ended_holds_again_while_the_clocks_keep_step():
    client, adapter, clock = make({f"{A}/x": [Reply(429, headers={"Retry-After": "5"}), Reply(200),
                                              Reply(429, headers={"Retry-After": "5"}), Reply(200)]})
    assert client.get(f"{A}/x").status_code == 200
    clock.advance(10)
    assert client.get(f"{A}/x").status_code == 200
    assert clock.sleeps.count(5.0) == 2 and len(adapter.calls) == 4
    assert client.hold_remaining(f"{A}/x") == 0


@pytest.mark.parametrize("step_s", [-3600.0, 3600.0])
def test_the_next_caller_waits_out_a_hold_on_the_monotonic_clock(step_s):
    clock = _SteppingClock(step_s)
    registry = HostRegistry(clock)
    c1, _, _ = make({f"{A}/x": Reply(429, headers={"Retry-After": "5"})}, clock=clock, registry=registry,
                    max_retries=0)
    assert c1.get(f"{A}/x").status_code == 429 and not clock.stepped
    c2, adapter, _ = make({f"{A}/x": Reply(200)}, clock=clock, registry=registry, max_retry_after_s=30)
    start = clock.monotonic()
    assert c2.get(f"{A}/x").status_code == 200
    assert clock.stepped and clock.monotonic() - start == pytest.approx(5.0, abs=1.0)


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
@pytest.mark.parametrize("in_flight", [1, 4])  # 1: each start holds the host's lease end to end
def test_a_hold_another_process_set_costs_its_length_when_the_wall_clock_steps_back_an_hour(store_kind, in_flight,
                                                                                            tmp_path):
    from paperfetch.state import open_store

    clock = _SteppingClock(-3600.0)
    store = open_store("memory" if store_kind == "memory" else str(tmp_path / "hosts.sqlite3"))
    first, second = HostRegistry(clock, store), HostRegistry(clock, store)  # two processes sharing the store
    c1, _, _ = make({f"{A}/x": Reply(429, headers={"Retry-After": "4"})}, clock=clock, registry=first,
                    max_retries=0, max_in_flight_per_host=in_flight)
    assert c1.get(f"{A}/x").status_code == 429 and not clock.stepped
    c2, adapter, _ = make({f"{A}/x": Reply(200)}, clock=clock, registry=second, max_retry_after_s=30,
                          max_in_flight_per_host=in_flight)
    start = clock.monotonic()
    assert c2.get(f"{A}/x").status_code == 200
    assert clock.stepped and clock.monotonic() - start <= 4.0 + 1.0  # the hold's own length, not a lease or an hour
    store.close()


@pytest.mark.parametrize("step_s", [-3600.0, 3600.0])
def test_the_time_until_a_held_host_is_ready_is_the_hold_left_whatever_the_wall_clock_does(step_s):
    # what a batch's scheduler and the copy choice wait on: after the step it still says the hold's own length
    clock = FakeClock()
    client, _, _ = make({f"{A}/x": Reply(429, headers={"Retry-After": "4"})}, clock=clock, max_retries=0)
    assert client.get(f"{A}/x").status_code == 429
    clock.advance(2.0)
    clock.step_wall(step_s)
    assert client.ready_in(f"{A}/x") == pytest.approx(2.0) and client.hold_remaining(f"{A}/x") == pytest.approx(2.0)


def test_a_wall_clock_stepped_forward_does_not_end_a_hold_this_process_read():
    registry = HostRegistry(FakeClock())
    clock = registry.clock
    c1, _, _ = make({f"{A}/x": Reply(429, headers={"Retry-After": "5"})}, clock=clock, registry=registry,
                    max_retries=0)
    assert c1.get(f"{A}/x").status_code == 429
    clock.step_wall(3600.0)  # the store's wall clock says the hold ended long ago
    c2, adapter, _ = make({f"{A}/x": Reply(200)}, clock=clock, registry=registry, max_retry_after_s=30)
    start = clock.monotonic()
    assert c2.hold_remaining(f"{A}/x") == pytest.approx(5.0)
    assert c2.get(f"{A}/x").status_code == 200
    assert clock.monotonic() - start == pytest.approx(5.0, abs=1e-6)


def test_domain_status_has_one_dtype_and_one_missing_marker_a_column(tmp_path, hosts):
    """The Retriever's frame (both clients' rows joined): a held host beside a plain one and one the API client
    asked, each column one dtype (never ``object``) and one kind of missing value (``<NA>``, or ``NaT`` for times)."""
    from tests._quick import retriever

    held = hosts("127.0.0.181", {"*": Reply(429, b"busy", headers={"Retry-After": "3600"})})
    plain = hosts("127.0.0.182", {"*": Reply(200, b"ok")})
    with retriever(tmp_path / "pdfs", state="memory", cache=False) as r:
        r.web.get(held.url("/a"))
        r.web.get(plain.url("/a"))
        r.api.get(plain.url("/b"))
        frame = r.domain_status()
    assert len(frame) >= 2 and not frame["held_until"].isna().all() and frame["held_until"].isna().any()
    for column in frame.columns:
        assert frame[column].dtype != object, column
        missing = {type(value).__name__ for value in frame[column] if pd.isna(value)}
        assert missing <= ({"NaTType"} if column in ("held_until", "suppressed_until", "breaker_open_until",
                                                      "next_allowed_at") else {"NAType"}), (column, missing)


def test_a_host_is_closed_for_its_hold_or_until_its_open_breaker_lets_the_probe_through():
    # what the copy choice and the scheduler's second decision read: held (Retry-After) or the breaker open
    held, _, clock = make({f"{A}/x": Reply(503, headers={"Retry-After": "40"})}, max_retries=0)
    assert held.get(f"{A}/x").status_code == 503
    clock.advance(10)
    assert held.closed_for(f"{A}/x") == pytest.approx(held.hold_remaining(f"{A}/x")) == pytest.approx(30.0)
    broken, _, clock = make({f"{A}/x": Reply(500)}, max_retries=0, breaker_failures=1, backoff_base_s=60)
    assert broken.get(f"{A}/x").status_code == 500
    assert broken.hold_remaining(f"{A}/x") == 0  # no hold: the breaker alone keeps the host closed
    closed = broken.closed_for(f"{A}/x")
    assert closed > 0 and broken.snapshot(A).breaker == "open"
    clock.advance(closed)
    assert broken.closed_for(f"{A}/x") == 0  # the probe's time: open to one request again
    assert broken.closed_for(f"{B}/x") == 0
