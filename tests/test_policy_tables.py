"""The politeness policy's tables, pinned: delay resolution, Crawl-delay interaction, backoff, header priority."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paperfetch import defaults
from paperfetch.errors import ConfigurationError
from paperfetch.http.delays import BackoffPolicy, DelayRange, RetrySchedule, effective_range, resolve_configured_range
from paperfetch.http.headers import (
    has_rate_limit_headers,
    parse_rate_limit_reset,
    parse_retry_after,
    parse_structured_rate_limit,
    server_requested_wait,
)

NOW = 1_700_000_000.0
FALLBACK = DelayRange(1.0, 3.0)


@pytest.mark.parametrize(
    ("delay_min", "delay_max", "expected"),
    [
        (1.0, 5.0, DelayRange(1.0, 5.0)),
        (2.0, None, DelayRange(2.0, 6.0)),   # max = 3 x min
        (None, 4.0, DelayRange(0.0, 4.0)),   # min = 0
        (None, None, None),                  # off
    ],
)
def test_delay_bounds_resolve_as_the_table_says(delay_min, delay_max, expected):
    assert resolve_configured_range(delay_min, delay_max) == expected


@pytest.mark.parametrize(("delay_min", "delay_max"), [(-1.0, None), (None, -2.0), (5.0, 1.0), (float("nan"), None)])
def test_impossible_delay_bounds_are_refused_with_a_clear_message(delay_min, delay_max):
    with pytest.raises(ConfigurationError, match="delay_"):
        resolve_configured_range(delay_min, delay_max)


@pytest.mark.parametrize(
    ("configured", "crawl_delay", "expected"),
    [
        (DelayRange(1, 5), 3.0, DelayRange(3, 5)),
        (DelayRange(1, 5), 0.5, DelayRange(1, 5)),   # smaller than the minimum: unchanged
        (DelayRange(1, 3), 10.0, DelayRange(10, 10)),
        (None, 5.0, DelayRange(5, 5)),                # fixed
        (None, None, FALLBACK),                       # rate_limit_min_s-rate_limit_max_s
    ],
)
def test_crawl_delay_raises_the_floor_of_the_delay_range(configured, crawl_delay, expected):
    got = effective_range(configured=configured, respect_robots_txt=True, crawl_delay=crawl_delay, fallback=FALLBACK)
    assert got == expected


def test_without_robots_there_is_no_fallback_delay():
    assert effective_range(configured=None, respect_robots_txt=False, crawl_delay=None, fallback=FALLBACK) is None


@pytest.mark.parametrize(
    ("configured", "backoff", "expected"),
    [
        (DelayRange(1, 5), 4.0, DelayRange(4, 5)),
        (DelayRange(1, 5), 8.0, DelayRange(8, 8)),
        (DelayRange(2, 5), 1.0, DelayRange(2, 5)),
        (None, 4.0, DelayRange(4, 4)),  # no explicit delay: backoff is a fixed delay
        (None, 0.0, None),
    ],
)
def test_backoff_is_a_floor_under_the_delay_range(configured, backoff, expected):
    got = effective_range(configured=configured, respect_robots_txt=False, crawl_delay=None, fallback=FALLBACK, backoff=backoff)
    assert got == expected


def test_a_per_host_interval_is_a_floor_too():
    got = effective_range(configured=None, respect_robots_txt=False, crawl_delay=None, fallback=FALLBACK, min_interval=3.0)
    assert got == DelayRange(3.0, 3.0)


def test_backoff_doubles_from_base_and_is_capped():
    policy = BackoffPolicy(base_s=1.0, multiplier=2.0, max_s=10.0, decay_s=1.0)
    seen, value = [], 0.0
    for _ in range(6):
        value = policy.increase(value)
        seen.append(value)
    assert seen == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_backoff_recovers_linearly_then_clears():
    policy = BackoffPolicy(decay_s=1.0)
    assert policy.decrease(4.0) == 3.0
    assert policy.decrease(0.5) == 0.0
    assert policy.decrease(0.0) == 0.0


@pytest.mark.parametrize(
    ("schedule", "waits"),
    [("linear", [1.0, 2.0, 3.0, 4.0]), ("exponential", [1.0, 2.0, 4.0, 8.0])],
)
def test_network_retry_schedules(schedule, waits):
    sched = RetrySchedule.parse(schedule)
    assert [sched.wait(a, 1.0, 300.0) for a in range(4)] == waits


def test_unknown_retry_schedule_lists_the_choices():
    with pytest.raises(ConfigurationError, match="'linear', 'exponential'"):
        RetrySchedule.parse("fibonacci")


HTTP_DATE_IN_30S = format_datetime(datetime.fromtimestamp(NOW + 30, tz=timezone.utc), usegmt=True)
HTTP_DATE_PAST = format_datetime(datetime.fromtimestamp(NOW - 3600, tz=timezone.utc), usegmt=True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("30", 30.0),
        (" 30 ", 30.0),
        ("0", 0.0),
        ("1.5", 1.5),
        (HTTP_DATE_IN_30S, 30.0),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),  # in the past: now
        (HTTP_DATE_PAST, 0.0),
        ("Sunday, 06-Nov-94 08:49:37 GMT", 0.0),  # RFC 850 form
        ("Sun Nov  6 08:49:37 1994", 0.0),        # asctime form
        ("soon", None),
        ("-5", None),
        ("", None),
        (None, None),
        ("inf", None),
        ("30 seconds", None),
    ],
)
def test_retry_after_parses_delta_seconds_and_http_dates(value, expected):
    got = parse_retry_after(value, NOW)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1.0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("60", 60.0),                  # seconds until reset
        (str(int(NOW + 90)), 90.0),    # epoch
        (str(int(NOW - 90)), 0.0),     # epoch in the past
        ("1000000000", defaults.MAX_HOLD_S),  # not above the threshold: a delta, held until the cap
        ("abc", None),
        ("-1", None),
    ],
)
def test_rate_limit_reset_distinguishes_epoch_from_delta(value, expected):
    got = parse_rate_limit_reset(value, NOW)
    assert got == (None if expected is None else pytest.approx(expected))


def test_header_priority_retry_after_first_then_ratelimit_reset_then_x_ratelimit_reset():
    headers = {"Retry-After": "5", "RateLimit-Reset": "10", "X-RateLimit-Reset": "20"}
    assert server_requested_wait(headers, NOW).header == "Retry-After"
    headers = {"RateLimit-Reset": "10", "X-RateLimit-Reset": "20"}
    assert server_requested_wait(headers, NOW).header == "RateLimit-Reset"
    assert server_requested_wait({"X-RateLimit-Reset": "20"}, NOW).seconds == 20.0
    assert server_requested_wait({"RateLimit": "limit=10, remaining=0, reset=7"}, NOW).seconds == 7.0
    assert server_requested_wait({}, NOW) is None


def test_garbage_in_a_higher_priority_header_falls_through_to_the_next():
    assert server_requested_wait({"Retry-After": "later", "X-RateLimit-Reset": "12"}, NOW).header == "X-RateLimit-Reset"


def test_structured_ratelimit_header_forms():
    assert parse_structured_rate_limit('"default";r=0;t=9') == 9.0
    assert parse_structured_rate_limit("limit=1") is None


def test_remaining_zero_counts_as_rate_limit_headers():
    assert has_rate_limit_headers({"X-RateLimit-Remaining": "0"}, NOW)
    assert not has_rate_limit_headers({"X-RateLimit-Remaining": "5"}, NOW)
    assert not has_rate_limit_headers({"Content-Type": "text/html"}, NOW)


@given(st.text(max_size=40))
def test_retry_after_never_raises_and_never_goes_negative(text):
    got = parse_retry_after(text, NOW)
    assert got is None or (got >= 0 and math.isfinite(got))


@given(st.integers(min_value=0, max_value=10**6))
def test_retry_after_delta_roundtrips(seconds):
    assert parse_retry_after(str(seconds), NOW) == min(float(seconds), defaults.MAX_HOLD_S)


@given(st.integers(min_value=1, max_value=10**7))
def test_epoch_reset_in_the_future_is_the_time_until_it(delta):
    assert parse_rate_limit_reset(str(int(NOW) + delta), NOW) == pytest.approx(min(delta, defaults.MAX_HOLD_S))


@given(st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(timezone.utc)))
def test_http_date_is_seconds_until_it_or_zero(when):
    got = parse_retry_after(format_datetime(when, usegmt=True), NOW)
    assert got == pytest.approx(min(max(0.0, int(when.timestamp()) - NOW), defaults.MAX_HOLD_S), abs=1.0)


@given(st.dictionaries(st.sampled_from(["Retry-After", "RateLimit-Reset", "X-RateLimit-Reset", "RateLimit", "X-Other"]), st.text(max_size=20)))
def test_server_requested_wait_is_total(headers):
    got = server_requested_wait(headers, NOW)
    assert got is None or 0 <= got.seconds <= defaults.MAX_HOLD_S


@pytest.mark.parametrize(
    "headers",
    [
        {"Retry-After": "999999999999"},
        {"Retry-After": "99999999999999999999"},
        {"Retry-After": "9" * 400},  # float() reads it as inf
        {"RateLimit-Reset": "99999999999999999999"},
        {"X-RateLimit-Reset": "1" + "0" * 30},
        {"RateLimit": "limit=1, remaining=0, reset=99999999999999999999"},
        {"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"},
    ],
)
def test_absurd_waits_are_held_until_the_cap_never_an_overflow(headers):
    wait = server_requested_wait(headers, NOW)
    assert wait is not None and wait.seconds == defaults.MAX_HOLD_S
    datetime.fromtimestamp(NOW + wait.seconds, tz=timezone.utc)  # a hold time that can be represented


def test_a_header_value_too_long_to_be_a_number_is_not_read():
    assert server_requested_wait({"Retry-After": "1" * 10_000_000}, NOW) is None
