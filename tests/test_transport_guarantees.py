"""The transport's guarantees: nothing a setting, a server or a subscriber does hangs a batch,
is swallowed, leaks a secret or reaches an address it must not.

Every test here bounds its time with small limits set here.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import traceback
from urllib.parse import quote, quote_plus

import pytest
import requests
import urllib3.util.connection

from paperfetch import HttpClient, Identification, RefusedRedirect, Retriever
from paperfetch.demo import fake_pdf
from paperfetch.errors import ConfigurationError, NetworkError, TooSlow
from paperfetch.http.addresses import redirect_refusal
from paperfetch.http.events import Event, EventKind
from paperfetch.http.hosts import HostRegistry, host_key
from paperfetch.http.scheduler import HostScheduler
from paperfetch.testing import LoopbackHost, Reply
from tests._hostile_servers import RawServer, head, trickle

FAST = {"network_retry_base_s": 0.01, "rate_limit_min_s": 0.01, "rate_limit_max_s": 0.02}
EMAIL = "Holes.Tester+pf@uni.example"
OPENALEX_KEY = "sk-open-XYZholes"
NCBI_KEY = "ncbiHoles42q"


def _refused() -> str:
    with socket.socket() as sock:  # a port that was just free: connecting to it is refused
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def _forms(value: str) -> set[str]:
    found = {value, quote(value, safe=""), quote(value), quote_plus(value), quote(quote(value, safe=""), safe="")}
    return {f.lower() for f in found}


NEEDLES = set().union(*(_forms(s) for s in (EMAIL, OPENALEX_KEY, NCBI_KEY)))


def _leaks(text: str) -> list[str]:
    low = text.lower()
    return sorted(n for n in NEEDLES if n in low)


def _paperfetch_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("paperfetch")]


def _within(seconds: float, fn):  # noqa: ANN001, ANN202 - run fn in a thread; a hang fails the test, never the suite
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value")


# ---------------------------------------------------------------------------- 1. no exception deadlocks a batch
def test_a_header_requests_refuses_gives_every_url_its_result_at_once_and_blames_no_host(hosts):
    site = hosts("127.0.2.1", {"*": Reply(200, b"ok")})
    client = HttpClient(user_agent="paperfetch-test\n", registry=HostRegistry(), **FAST)
    urls = [f"{site.base_url}/{n}" for n in range(8)]
    results = _within(20, lambda: client.get_many(urls))  # no request sent, so none waited for
    assert len(results) == 8 and all(isinstance(r, requests.exceptions.InvalidHeader) for r in results)
    snap = client.snapshot(site.base_url)
    assert site.hits() == 0 and (snap.failures, snap.breaker, snap.backoff_s) == (0, "closed", 0.0)


@pytest.mark.parametrize("settings", [{"http_options": {"user_agent": "paperfetch-test\n"}},
                                      {"email": "me@uni.example\n"}], ids=["user-agent", "email-read-from-a-file"])
def test_a_setting_requests_refuses_gives_a_row_per_input_within_seconds(settings, hosts, tmp_path):
    publisher = hosts("127.0.2.3", {"*": Reply(200, fake_pdf("ok"), {"Content-Type": "application/pdf"})})
    service = hosts("127.0.2.2", {"*": lambda req: Reply(200, json.dumps({"doi": "10.1000/x", "oa_locations": [
        {"url_for_pdf": publisher.base_url + "/x.pdf"}]}), {"Content-Type": "application/json"})})
    options = {**FAST, **settings.pop("http_options", {})}
    email = settings.pop("email", "tester@uni.example")
    ids = [f"10.1000/x{n}" for n in range(6)]
    with Retriever(email=email, out_dir=tmp_path, endpoints={"unpaywall": service.base_url}, sources=["unpaywall"],
                   respect_robots_txt=False, progress=False, verbosity=0, max_retries=1, http_options=options) as r:
        out = _within(30, lambda: r.download(ids))
    assert list(out["input"]) == ids and out["status"].notna().all()


def test_a_header_injection_in_the_email_is_refused_before_any_request(hosts, tmp_path):
    service = hosts("127.0.2.4", {"*": Reply(200, b"{}", {"Content-Type": "application/json"})})
    with pytest.raises(ConfigurationError, match="email contains a control character") as caught:
        Retriever(email="me@uni.example\r\nX-Injected: 1", out_dir=tmp_path, endpoints={"unpaywall": service.base_url})
    assert "me@uni.example" not in str(caught.value) and service.hits() == 0


class _BrokenAdapter(requests.adapters.BaseAdapter):
    """An adapter that fails with an error type no transport expects."""

    def send(self, request, **kwargs):  # noqa: ANN001, ANN201
        raise RuntimeError("the adapter broke")

    def close(self) -> None:
        pass


def test_an_adapter_raising_an_unexpected_error_gives_every_input_its_row_within_seconds(tmp_path):
    session = requests.Session()
    session.mount("http://", _BrokenAdapter())
    client = HttpClient(session=session, registry=HostRegistry(), **FAST)
    results = _within(20, lambda: client.get_many([f"http://127.0.2.17:9/{n}" for n in range(6)]))
    assert len(results) == 6 and all(isinstance(r, RuntimeError) for r in results)
    with Retriever(http=client, out_dir=tmp_path, sources=["unpaywall"], email="tester@uni.example",
                   endpoints={"unpaywall": "http://127.0.2.17:9"}, respect_robots_txt=False, progress=False,
                   verbosity=0) as r:
        out = _within(20, lambda: r.download([f"10.1000/b{n}" for n in range(4)]))
    assert len(out) == 4 and out["status"].notna().all() and out["error"].str.contains("adapter broke").all()


class _FailingLimiter:
    """A host record whose robots.txt can no longer be read after the first look (a store that broke)."""

    def __init__(self, limiter) -> None:  # noqa: ANN001
        self._limiter = limiter
        self.looks = 0

    @property
    def robots(self):  # noqa: ANN201
        self.looks += 1
        if self.looks > 1:
            raise RuntimeError("the host-state store broke")
        return None

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self._limiter, name)


class _Job:
    def __init__(self, url: str) -> None:
        self.url: str | None = url
        self.error: BaseException | None = None

    def advance(self) -> None:
        self.url = None


def test_a_failure_in_the_schedulers_own_bookkeeping_ends_that_job_with_its_error(monkeypatch):
    client = HttpClient(registry=HostRegistry(), **FAST)
    limiters: dict[str, _FailingLimiter] = {}
    real = client.host_limiter
    monkeypatch.setattr(client, "host_limiter", lambda url: limiters.setdefault(host_key(url), _FailingLimiter(real(url))))
    jobs = [_Job(f"http://127.0.2.4:9/{n}") for n in range(3)]
    finished: list[_Job] = []
    scheduler = HostScheduler(client, workers=2, on_finished=finished.append)
    _within(10, lambda: scheduler.run(jobs))
    assert sorted(id(j) for j in finished) == sorted(id(j) for j in jobs)
    assert any(isinstance(j.error, RuntimeError) for j in jobs)


# ---------------------------------------------------------------------------- 2. trickling ends early
@pytest.mark.timeout(30)  # a real socket trickle: bounded whatever the deadline does
def test_a_trickling_robots_txt_ends_at_its_own_deadline_and_counts_as_unreachable():
    def handler(conn, request, stopping):  # noqa: ANN001
        if b"robots.txt" in request.split(b"\r\n", 1)[0]:
            return trickle(b"User-agent: *\nDisallow:\n" * 100, 0.05, content_type="text/plain")(conn, request, stopping)
        conn.sendall(head("200 OK", {"Content-Type": "application/json", "Content-Length": "2"}) + b"{}")

    with RawServer("127.0.2.5", handler) as server:
        c = HttpClient(respect_robots_txt=True, max_retries=0, robots_deadline_s=0.5, min_rate_bytes_s=0,
                       registry=HostRegistry(), **FAST)
        assert c.fetch(f"{server.base_url}/x").content == b"{}"  # unreachable -> allowed, as configured
        assert c.snapshot(server.base_url).robots == "unreachable"  # cut at its deadline: read whole, it allows


@pytest.mark.timeout(30)  # a real socket trickle: bounded whatever the deadline does
def test_a_body_under_the_minimum_rate_ends_with_too_slow(tmp_path):
    with RawServer("127.0.2.6", trickle(fake_pdf("slow", size=5000), 0.01)) as server:  # ~100 bytes/s
        c = HttpClient(max_retries=0, min_rate_bytes_s=1000, min_rate_window_s=0.5, registry=HostRegistry(), **FAST)
        with pytest.raises(TooSlow, match="minimum of 1000 bytes/s"):
            c.download(f"{server.base_url}/slow.pdf", tmp_path / "slow.pdf")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.timeout(30)  # a real socket trickle: bounded whatever the deadline does
def test_a_body_that_stalls_ends_after_the_rate_window_not_the_read_timeout(tmp_path):
    def stall(conn, request, stopping):  # noqa: ANN001
        conn.sendall(head("200 OK", {"Content-Type": "application/pdf", "Content-Length": "100000"}) + b"%PDF-1.4\n")
        stopping.wait(30)

    with RawServer("127.0.2.7", stall) as server:
        c = HttpClient(max_retries=0, min_rate_bytes_s=1000, min_rate_window_s=0.5, timeout=(5, 20),
                       registry=HostRegistry(), **FAST)
        with pytest.raises(TooSlow):  # the rate window's error; the 20 s read timeout would raise another
            c.fetch(f"{server.base_url}/x")


@pytest.mark.timeout(30)  # a real socket trickle: bounded whatever the deadline does
def test_a_trickling_pdf_is_a_network_error_row_saying_too_slow(hosts, tmp_path):
    with RawServer("127.0.2.18", trickle(fake_pdf("slow", size=5000), 0.01)) as publisher:
        service = hosts("127.0.2.19", {"*": Reply(200, json.dumps({"doi": "10.1000/s", "oa_locations": [
            {"url_for_pdf": publisher.base_url + "/s.pdf"}]}), {"Content-Type": "application/json"})})
        with Retriever(email="tester@uni.example", out_dir=tmp_path, endpoints={"unpaywall": service.base_url},
                       sources=["unpaywall"], respect_robots_txt=False, progress=False, verbosity=0, max_retries=0,
                       http_options={**FAST, "min_rate_bytes_s": 1000, "min_rate_window_s": 0.5}) as r:
            out = r.download(["10.1000/s"])
    assert out.loc[0, "status"] == "network_error" and "minimum of 1000 bytes/s" in out.loc[0, "error"]


def test_a_quick_body_is_not_too_slow(hosts):
    site = hosts("127.0.2.8", {"*": Reply(200, b"x" * 300_000)})
    c = HttpClient(max_retries=0, min_rate_bytes_s=1000, min_rate_window_s=0.2, registry=HostRegistry(), **FAST)
    assert len(c.fetch(site.base_url + "/x").content) == 300_000


# ---------------------------------------------------------------------------- 3. Ctrl-C in a subscriber
def test_a_keyboard_interrupt_in_a_subscriber_stops_get_many_with_no_request_after(hosts):
    site = hosts("127.0.2.9", {"*": Reply(200, b"ok")})
    client = HttpClient(registry=HostRegistry(), **FAST)
    seen: list[int] = []

    def interrupt(event: Event) -> None:
        if event.kind is EventKind.RESPONSE and not seen:
            seen.append(site.hits())
            raise KeyboardInterrupt

    client.subscribe(interrupt)
    with pytest.raises(KeyboardInterrupt):
        _within(10, lambda: client.get_many([f"{site.base_url}/{n}" for n in range(10)], workers=4))
    assert _paperfetch_threads() == []  # no worker left to send another request, now or later
    assert seen and site.hits() == seen[0]


def test_a_keyboard_interrupt_in_a_subscriber_stops_download_with_no_request_after(hosts, tmp_path):
    service = hosts("127.0.2.10", {"*": Reply(404, b"{}", {"Content-Type": "application/json"})})
    seen: list[int] = []

    def interrupt(event: Event) -> None:
        if event.kind is EventKind.RESPONSE and not seen:
            seen.append(service.hits())
            raise KeyboardInterrupt

    with Retriever(email="tester@uni.example", out_dir=tmp_path, endpoints={"unpaywall": service.base_url},
                   sources=["unpaywall"], respect_robots_txt=False, progress=False, verbosity=0,
                   http_options=FAST) as r:
        r.web.subscribe(interrupt)
        if r.api is not r.web:
            r.api.subscribe(interrupt)
        with pytest.raises(KeyboardInterrupt):
            _within(20, lambda: r.download([f"10.1000/k{n}" for n in range(8)]))
        assert _paperfetch_threads() == []  # no worker left to send another request, now or later
    assert seen and service.hits() == seen[0]


# ---------------------------------------------------------------------------- 4. no secret in a chain or an event
def test_exception_chains_and_event_reprs_hold_no_secret(tmp_path):
    Identification(email=EMAIL, openalex_api_key=OPENALEX_KEY, ncbi_api_key=NCBI_KEY)  # registers the secrets
    base = _refused()
    url = (f"{base}/works?mailto={quote(EMAIL)}&api_key={OPENALEX_KEY.upper()}&email={quote_plus(EMAIL).lower()}"
           f"&x={NCBI_KEY}&raw={EMAIL}")
    client = HttpClient(max_retries=1, registry=HostRegistry(), **FAST)
    events: list[str] = []
    client.subscribe(lambda event: events.append(repr(event)))
    texts = []
    with pytest.raises(NetworkError) as fetched:
        client.fetch(url)
    texts.append("".join(traceback.format_exception(fetched.value)))
    with pytest.raises(NetworkError) as downloaded:
        client.download(url.replace("/works", "/paper.pdf"), tmp_path / "p.pdf")
    texts.append("".join(traceback.format_exception(downloaded.value)))
    assert _leaks("\n".join(texts)) == [] and _leaks("\n".join(events)) == []
    assert all("Connection refused" in t for t in texts)  # the cause's text is kept
    assert any(e for e in events if "network_error" in e.lower() and "refused" in e.lower())
    assert fetched.value.__cause__ is None and downloaded.value.__cause__ is None


# ---------------------------------------------------------------------------- 5. the e-mail only where asked
def _recording(agents: list[str], reply: Reply):  # noqa: ANN202
    def answer(request):  # noqa: ANN001, ANN202
        agents.append(request.headers.get("User-Agent", ""))
        return reply

    return answer


def test_the_contact_email_goes_only_to_the_hosts_that_ask_for_it(hosts):
    publisher_agents: list[str] = []
    service_agents: list[str] = []
    publisher = hosts("127.0.2.11", {"*": _recording(publisher_agents, Reply(200, b"ok"))})
    service = hosts("127.0.2.12", {"/go": _recording(service_agents, Reply(302, b"", {"Location": publisher.base_url + "/p"})),
                                   "*": _recording(service_agents, Reply(200, b"{}"))})
    client = HttpClient(contact_email="me@uni.example", contact_hosts={host_key(service.base_url)},
                        registry=HostRegistry(), **FAST)
    client.get(service.base_url + "/x")
    client.get(service.base_url + "/go")  # redirected to the publisher: the hop there carries no e-mail
    client.get(publisher.base_url + "/y")
    assert len(service_agents) == 2 and all("mailto:me@uni.example" in a for a in service_agents)
    assert len(publisher_agents) == 2 and not any("uni.example" in a for a in publisher_agents)
    assert all(a.startswith("paperfetch/") and "+https://" in a for a in publisher_agents)
    everywhere = HttpClient(contact_email="me@uni.example", contact_everywhere=True, registry=HostRegistry(), **FAST)
    everywhere.get(publisher.base_url + "/z")
    assert "mailto:me@uni.example" in publisher_agents[-1]


def test_a_retrievers_publishers_never_receive_the_email(hosts, tmp_path):
    publisher_agents: list[str] = []
    service_agents: list[str] = []
    publisher = hosts("127.0.2.13", {"*": _recording(publisher_agents, Reply(200, fake_pdf("ua"),
                                                                              {"Content-Type": "application/pdf"}))})
    service = hosts("127.0.2.14", {"*": _recording(service_agents, Reply(200, json.dumps({
        "doi": "10.1000/ua", "oa_locations": [{"url_for_pdf": publisher.base_url + "/ua.pdf"}]}),
        {"Content-Type": "application/json"}))})
    with Retriever(email="me@uni.example", out_dir=tmp_path, endpoints={"unpaywall": service.base_url},
                   sources=["unpaywall"], respect_robots_txt=False, progress=False, verbosity=0, http_options=FAST) as r:
        out = r.download(["10.1000/ua"])
    assert out.loc[0, "status"] == "downloaded"
    assert service_agents and all("mailto:me@uni.example" in a for a in service_agents)
    assert publisher_agents and not any("uni.example" in a for a in publisher_agents)


# ---------------------------------------------------------------------------- 6. no request after a 403
def test_no_request_reaches_a_host_after_its_403_even_for_requests_already_waiting_for_their_turn():
    hits: list[str] = []
    first_arrived = threading.Event()

    def forbidden(request):  # noqa: ANN001, ANN202
        first_arrived.set()
        time.sleep(0.005)  # the others are queued for the host's slot meanwhile
        return Reply(403, b"no")

    with LoopbackHost("127.0.2.15", {"/forbidden": forbidden, "*": Reply(200, b"ok")}) as site:
        for run in range(50):
            site.log.clear()
            first_arrived.clear()
            client = HttpClient(registry=HostRegistry(), **FAST)
            statuses: list[int] = []
            first = threading.Thread(target=lambda: statuses.append(client.get(site.base_url + "/forbidden").status_code))
            first.start()
            assert first_arrived.wait(5)
            others = [threading.Thread(target=lambda n=n: statuses.append(client.get(f"{site.base_url}/{n}").status_code))
                      for n in range(4)]
            for t in others:
                t.start()
            for t in [first, *others]:
                t.join(10)
            hits = [path for _, path in site.log]
            assert hits == ["/forbidden"], (run, hits)
            assert statuses == [403] * 5


# ---------------------------------------------------------------------------- 7. link-local: never
@pytest.mark.parametrize("target", ["http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/x",
                                    "http://metadata.google.internal/computeMetadata/v1/",
                                    "http://[::ffff:169.254.169.254]/latest/"])
def test_a_redirect_to_a_link_local_or_metadata_address_is_refused_from_a_loopback_origin(target, hosts, monkeypatch):
    site = hosts("127.0.2.16", {"*": Reply(302, b"", {"Location": target})})
    dialled: list[object] = []
    real = urllib3.util.connection.create_connection

    def spy(address, *args, **kwargs):  # noqa: ANN001, ANN202
        dialled.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(urllib3.util.connection, "create_connection", spy)
    monkeypatch.setattr("urllib3.connection.connection.create_connection", spy, raising=False)
    client = HttpClient(registry=HostRegistry(), **FAST)
    with pytest.raises(RefusedRedirect, match="link-local|metadata"):
        client.get(site.base_url + "/start")
    assert site.hits() == 1
    assert all(a[0] == "127.0.2.16" for a in dialled)  # type: ignore[index]
    assert redirect_refusal(site.base_url, target, allow_private=True) is not None


# ---------------------------------------------------------------------------- 8. a DEBUG record of a failure
def test_basicconfig_debug_shows_a_paperfetch_record_of_a_failed_connection():
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import logging
        logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s %(message)s")
        from paperfetch import HttpClient
        from paperfetch.http.hosts import HostRegistry
        try:
            HttpClient(max_retries=0, registry=HostRegistry()).get("{_refused()}/x?mailto=me%40uni.example")
        except Exception as exc:
            print("raised", type(exc).__name__)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    out = done.stdout + done.stderr
    assert "raised ConnectionError" in out
    records = [line for line in out.splitlines() if line.split(" ")[1:2] and line.split(" ")[1].startswith("paperfetch.http")]
    assert any("ConnectionError" in line for line in records), out
    assert "me%40uni.example" not in "\n".join(records)
