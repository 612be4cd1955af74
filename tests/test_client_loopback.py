"""HttpClient against real HTTP servers on loopback addresses (127.0.0.2, 127.0.0.3 …)."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest

from paperfetch import DownloadTooLarge, HttpClient, InvalidPDF, NetworkError, RateLimited, is_synthetic
from paperfetch.http.hosts import HostRegistry
from paperfetch.testing import Reply, gaps

PDF = b"%PDF-1.4\n" + b"0" * 5000 + b"\n%%EOF\n"


def client(**kwargs):
    kwargs.setdefault("registry", HostRegistry())
    kwargs.setdefault("timeout", (2.0, 5.0))
    return HttpClient(**kwargs)


def test_crawl_delay_from_a_real_robots_txt_paces_real_requests(hosts):
    host = hosts("127.0.0.2", {"/robots.txt": Reply(200, "User-agent: *\nCrawl-delay: 0.1\n"), "*": Reply(200, b"ok")})
    c = client(respect_robots_txt=True)
    for i in range(6):
        assert c.get(host.url(f"/p{i}")).status_code == 200
    arrivals = host.arrivals("/p")
    assert len(arrivals) == 6 and min(gaps(arrivals)) >= 0.1 - 0.002
    assert host.hits("/robots.txt") == 1


def test_robots_disallow_on_a_real_server(hosts):
    host = hosts("127.0.0.3", {"/robots.txt": Reply(200, "User-agent: paperfetch\nDisallow: /no\n"), "*": Reply(200)})
    c = client(respect_robots_txt=True, rate_limit_min_s=0, rate_limit_max_s=0)
    assert c.get(host.url("/no/x")) is None
    assert c.get(host.url("/yes")).status_code == 200
    assert host.hits("/no/x") == 0


def test_429_then_200_flow(hosts):
    replies = iter([Reply(429, headers={"Retry-After": "1"}), Reply(200, b"fine")])
    host = hosts("127.0.0.4", {"/x": lambda request: next(replies)})
    c = client()
    started = time.monotonic()
    response = c.get(host.url("/x"))
    assert response.status_code == 200 and response.content == b"fine"
    assert time.monotonic() - started >= 1.0
    assert min(gaps(host.arrivals("/x"))) >= 1.0 - 0.002


def test_503_retry_after_hold_answers_later_calls_from_the_hold(hosts):
    host = hosts("127.0.0.5", {"*": Reply(503, headers={"Retry-After": "30"})})
    c = client(max_retry_after_s=5)
    c.get(host.url("/first"))
    for i in range(200):  # answered from the hold: nothing sent, nothing waited (a wait is 5 s, 1,000 s in all)
        assert is_synthetic(c.get(host.url(f"/n{i}"))) == "held"
    assert host.hits() == 1
    with pytest.raises(RateLimited) as info:
        c.fetch(host.url("/again"))
    assert info.value.held_until is not None


def test_403_suppression_on_a_real_server(hosts):
    host = hosts("127.0.0.6", {"*": Reply(403, b"forbidden")})
    c = client()
    assert c.get(host.url("/a")).status_code == 403
    assert is_synthetic(c.get(host.url("/b"))) == "suppressed"
    assert host.hits() == 1


def test_redirect_across_hosts_checks_the_target_hosts_robots(hosts):
    target = hosts("127.0.0.8", {"/robots.txt": Reply(200, "User-agent: *\nDisallow: /closed\n"), "/open.pdf": Reply(200, PDF)})
    redirector = hosts("127.0.0.7", {
        "/robots.txt": Reply(404),
        "/to-open": Reply(302, headers={"Location": target.url("/open.pdf")}),
        "/to-closed": Reply(302, headers={"Location": target.url("/closed/x.pdf")}),
    })
    c = client(respect_robots_txt=True, rate_limit_min_s=0, rate_limit_max_s=0)
    response = c.get(redirector.url("/to-open"))
    assert response.status_code == 200 and response.content == PDF
    assert c.get(redirector.url("/to-closed")) is None
    assert target.hits("/closed/x.pdf") == 0


def test_redirect_hop_to_a_forbidden_host_suppresses_that_host_not_the_redirector(hosts):
    banned = hosts("127.0.0.10", {"*": Reply(403)})
    front = hosts("127.0.0.9", {"*": Reply(302, headers={"Location": banned.url("/x")})})
    c = client(suppression_exempt=["127.0.0.9"])
    assert c.get(front.url("/a")).status_code == 403
    assert set(c.suppressed_domains) == {f"127.0.0.10:{banned.port}"}


def test_many_threads_on_one_host_never_break_its_pacing(hosts):
    in_flight = {"now": 0, "max": 0}
    lock = threading.Lock()

    def handler(request):
        with lock:
            in_flight["now"] += 1
            in_flight["max"] = max(in_flight["max"], in_flight["now"])
        time.sleep(0.005)
        with lock:
            in_flight["now"] -= 1
        return Reply(200, b"ok")

    host = hosts("127.0.0.11", {"*": handler})
    c = client(delay_min_s=0.03, delay_max_s=0.05)
    threads = [threading.Thread(target=lambda i=i: [c.get(host.url(f"/t{i}/{j}")) for j in range(4)]) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    arrivals = host.arrivals()
    assert len(arrivals) == 32
    assert min(gaps(arrivals)) >= 0.03 - 0.002
    assert in_flight["max"] == 1


def test_two_hosts_are_paced_independently(hosts):
    a = hosts("127.0.0.12", {"*": Reply(200)})
    b = hosts("127.0.0.13", {"*": Reply(200)})
    c = client(delay_min_s=0.2, delay_max_s=0.2)
    workers = [threading.Thread(target=lambda h=h: [c.get(h.url(f"/{j}")) for j in range(4)]) for h in (a, b)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(10)
    arrivals = {h: h.arrivals() for h in (a, b)}
    assert all(len(times) == 4 and min(gaps(times)) >= 0.2 - 0.002 for times in arrivals.values())
    # independent: each host was asked while the other was being paced (their windows overlap),
    # not one host after the other
    assert max(t[0] for t in arrivals.values()) < min(t[-1] for t in arrivals.values())


# ---------------------------------------------------------------- streamed downloads
def _no_part_files(folder: Path) -> bool:
    return not any(p.name.endswith(".part") for p in folder.iterdir())


def test_download_streams_to_the_final_name_with_its_hash(hosts, tmp_path):
    host = hosts("127.0.0.14", {"/paper.pdf": Reply(200, PDF, {"Content-Type": "application/pdf"})})
    c = client()
    result = c.download(host.url("/paper.pdf"), tmp_path / "paper.pdf", chunk_size=1024)
    assert result.bytes == len(PDF) and result.sha256 == hashlib.sha256(PDF).hexdigest()
    assert (tmp_path / "paper.pdf").read_bytes() == PDF
    assert _no_part_files(tmp_path)


def test_rejected_body_leaves_no_file(hosts, tmp_path):
    host = hosts("127.0.0.15", {"/paper.pdf": Reply(200, b"<html>not a pdf</html>", {"Content-Type": "application/pdf"})})

    def validate(head, response):
        if not head.startswith(b"%PDF-"):
            raise InvalidPDF("not a PDF", url=response.url)

    with pytest.raises(InvalidPDF):
        client().download(host.url("/paper.pdf"), tmp_path / "paper.pdf", validate=validate)
    assert list(tmp_path.iterdir()) == []


def test_truncated_body_is_retried_then_reported_and_nothing_is_kept(hosts, tmp_path):
    host = hosts("127.0.0.16", {"/paper.pdf": Reply(200, PDF[:100], {"Content-Length": str(len(PDF)), "Connection": "close"})})
    c = client(max_retries=1, network_retry_base_s=0.01)
    with pytest.raises(NetworkError, match="download of .* failed"):
        c.download(host.url("/paper.pdf"), tmp_path / "paper.pdf")
    assert host.hits("/paper.pdf") == 2
    assert list(tmp_path.iterdir()) == []


def test_size_limit_is_enforced(hosts, tmp_path):
    host = hosts("127.0.0.17", {"/big.pdf": Reply(200, PDF)})
    with pytest.raises(DownloadTooLarge):
        client().download(host.url("/big.pdf"), tmp_path / "big.pdf", max_bytes=1000)
    assert list(tmp_path.iterdir()) == []
