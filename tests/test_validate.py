"""Tests for paperfetch.validate: PDF / HTML / bot-challenge sniffing and on-disk PDF checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from paperfetch.validate import (
    HEAD_BYTES,
    KINDS,
    MAX_PDF_HEADER_OFFSET,
    TAIL_BYTES,
    Verdict,
    check_pdf_file,
    detect_bot_challenge,
    sniff,
)
from tests._real import SKIP_REASON, real_fixtures_dir

FIXTURES = real_fixtures_dir()
if FIXTURES is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)
LANDING_PAGES = FIXTURES / "landing_pages"
ALL_PAGES = sorted(LANDING_PAGES.glob("*.html"))
CHALLENGE_PAGES = [p for p in ALL_PAGES if p.name.endswith("cloudflare_challenge.html")]
ORDINARY_PAGES = [p for p in ALL_PAGES if p not in CHALLENGE_PAGES]

SMALL_PDF = b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"


def test_fixture_folder_has_both_kinds_of_page() -> None:
    assert len(CHALLENGE_PAGES) == 2
    assert len(ORDINARY_PAGES) >= 10


# --------------------------------------------------------------------------- real pages

@pytest.mark.parametrize("page", CHALLENGE_PAGES, ids=lambda p: p.name)
@pytest.mark.parametrize("head_only", [False, True], ids=["whole", "head"])
def test_cloudflare_pages_are_bot_challenges(page: Path, head_only: bool) -> None:
    body = page.read_bytes()
    verdict = sniff(body[:HEAD_BYTES] if head_only else body, "text/html; charset=UTF-8")
    assert verdict == Verdict(False, "bot_challenge", verdict.reason)
    assert "Cloudflare" in verdict.reason
    assert "does not get round bot challenges" in verdict.reason


@pytest.mark.parametrize("page", ORDINARY_PAGES, ids=lambda p: p.name)
@pytest.mark.parametrize("head_only", [False, True], ids=["whole", "head"])
def test_ordinary_landing_pages_are_html_not_challenges(page: Path, head_only: bool) -> None:
    body = page.read_bytes()
    verdict = sniff(body[:HEAD_BYTES] if head_only else body)
    assert (verdict.ok, verdict.kind) == (False, "html")
    assert detect_bot_challenge(body.decode("utf-8", "replace")) is None


def test_passive_cloudflare_script_on_ordinary_page_is_not_a_challenge() -> None:
    # APS and USENIX pages load Cloudflare's passive bot-detection script; that is no challenge.
    page = '<!DOCTYPE html><html><head><title>Paper</title></head><body><script>' \
           "a.src='/cdn-cgi/challenge-platform/scripts/jsd/main.js';</script></body></html>"
    assert sniff(page.encode()).kind == "html"


# --------------------------------------------------------------------------- synthetic challenges

@pytest.mark.parametrize(
    "page, vendor",
    [
        ("<html><head><title>Just a moment...</title></head></html>", "Cloudflare"),
        ('<html><body><div class="cf-browser-verification">x</div></body></html>', "Cloudflare"),
        ("<html><head><title>Attention Required! | Cloudflare</title></head></html>", "Cloudflare"),
        ('<html><body><div id="px-captcha"></div></body></html>', "PerimeterX"),
        ("<html><body><script src='https://geo.captcha-delivery.com/captcha/'></script></body></html>", "DataDome"),
        ('<html><body><div id="sec-if-cpt-container"></div></body></html>', "Akamai"),
        ("<html><body>Request unsuccessful. Incapsula incident ID: 123</body></html>", "Incapsula"),
        ("<html><head><title>Checking your browser</title></head></html>", "Checking your browser"),
        ("<html><head><title>Robot Check</title></head></html>", "Robot Check"),
        ("<html><head><title>Are you a robot?</title></head></html>", "robot"),
    ],
)
def test_other_interstitials_are_bot_challenges(page: str, vendor: str) -> None:
    verdict = sniff(page.encode())
    assert verdict.kind == "bot_challenge"
    assert vendor in verdict.reason


def test_captcha_in_body_of_ordinary_page_is_not_a_challenge() -> None:
    page = "<html><head><title>Article</title></head><body><form>reCAPTCHA for comments</form></body></html>"
    assert sniff(page.encode()).kind == "html"


# --------------------------------------------------------------------------- sniff basics

def test_pdf_is_ok() -> None:
    assert sniff(SMALL_PDF) == Verdict(True, "pdf", "the body is a PDF")


@pytest.mark.parametrize(
    "prefix",
    [b"\xef\xbb\xbf", b"\n\n   \r\n", b"\xef\xbb\xbf\n", b"junk" * 10, b"x" * MAX_PDF_HEADER_OFFSET],
    ids=["bom", "whitespace", "bom+newline", "junk", "max-junk"],
)
def test_pdf_after_leading_junk_is_ok(prefix: bytes) -> None:
    verdict = sniff(prefix + SMALL_PDF)
    assert verdict.ok and verdict.kind == "pdf"
    assert str(len(prefix)) in verdict.reason


def test_pdf_header_too_far_in_is_not_a_pdf() -> None:
    verdict = sniff(b"x" * (MAX_PDF_HEADER_OFFSET + 1) + SMALL_PDF)
    assert not verdict.ok and verdict.kind == "other"


def test_body_wins_over_content_type() -> None:
    assert sniff(SMALL_PDF, "text/html").kind == "pdf"
    verdict = sniff(b"<!DOCTYPE html><html><body>Log in</body></html>", "application/pdf")
    assert verdict.kind == "html"
    assert "labelled application/pdf" in verdict.reason


@pytest.mark.parametrize(
    "body",
    [
        b"<!doctype html><title>x</title>",
        b"<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\">",
        b"<HTML><HEAD></HEAD></HTML>",
        b"<head><meta charset=utf-8>",
        b"\xef\xbb\xbf  \n<html lang=en>",
        b"\xff\xfe" + "<html><body>x</body></html>".encode("utf-16-le"),
        b"<?xml version='1.0'?>\n<!DOCTYPE html><html xmlns='http://www.w3.org/1999/xhtml'>",
        b"<!-- served by x -->\n<html>",
        b"\n\n\n<!DOCTYPE html>\n<html>",
    ],
)
def test_html_detection(body: bytes) -> None:
    assert sniff(body).kind == "html"


def test_html_by_content_type_when_no_tag_first() -> None:
    assert sniff(b"Forbidden", "text/html; charset=utf-8").kind == "html"


@pytest.mark.parametrize("body", [b"", b"   \r\n\t ", b"\x00\x00"])
def test_empty_body(body: bytes) -> None:
    verdict = sniff(body)
    assert (verdict.ok, verdict.kind) == (False, "empty")


def test_json_body_is_other() -> None:
    verdict = sniff(b'{"error": "not found"}', "application/json")
    assert (verdict.ok, verdict.kind) == (False, "other")
    assert "JSON" in verdict.reason and "application/json" in verdict.reason


def test_other_bodies() -> None:
    assert "XML" in sniff(b"<?xml version='1.0'?><error/>").reason
    assert "binary" in sniff(b"\x89PNG\r\n\x1a\n\x00\x00").reason
    assert "plain text" in sniff(b"Service unavailable").reason


def test_every_verdict_kind_is_declared() -> None:
    samples = [SMALL_PDF, b"", b"<html>", b"{}", CHALLENGE_PAGES[0].read_bytes()]
    assert {sniff(s).kind for s in samples} <= KINDS


# --------------------------------------------------------------------------- files on disk

def write(tmp_path: Path, body: bytes, name: str = "paper.pdf") -> Path:
    path = tmp_path / name
    path.write_bytes(body)
    return path


def test_check_good_pdf_file(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL_PDF)
    assert check_pdf_file(path).ok
    assert check_pdf_file(str(path), expected_length=len(SMALL_PDF)).ok


def test_check_pdf_file_with_trailing_bytes_after_eof_is_lenient(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL_PDF + b"\x00" * 500 + b"\n")
    assert check_pdf_file(path).ok


def test_check_large_pdf_file(tmp_path: Path) -> None:
    path = write(tmp_path, b"%PDF-1.4\n" + b"0" * 100_000 + b"\n%%EOF")
    assert check_pdf_file(path).ok


def test_truncated_pdf_file(tmp_path: Path) -> None:
    body = b"%PDF-1.4\n" + b"stream data " * 1000 + b"\n%%EOF\n"
    path = write(tmp_path, body[: len(body) // 2])
    verdict = check_pdf_file(path)
    assert (verdict.ok, verdict.kind) == (False, "truncated")
    assert "%%EOF" in verdict.reason and str(TAIL_BYTES) in verdict.reason


def test_eof_marker_only_far_from_the_end_is_truncated(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL_PDF + b"x" * (TAIL_BYTES + 10))
    assert check_pdf_file(path).kind == "truncated"


def test_length_shorter_than_expected_is_truncated(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL_PDF)
    verdict = check_pdf_file(path, expected_length=len(SMALL_PDF) + 100)
    assert (verdict.ok, verdict.kind) == (False, "truncated")
    assert str(len(SMALL_PDF)) in verdict.reason


def test_length_longer_than_expected_is_a_mismatch(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL_PDF)
    verdict = check_pdf_file(path, expected_length=10)
    assert (verdict.ok, verdict.kind) == (False, "length_mismatch")


def test_empty_file(tmp_path: Path) -> None:
    assert check_pdf_file(write(tmp_path, b"")).kind == "empty"


def test_html_saved_as_pdf(tmp_path: Path) -> None:
    path = write(tmp_path, CHALLENGE_PAGES[0].read_bytes())
    assert check_pdf_file(path).kind == "bot_challenge"


def test_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        check_pdf_file(tmp_path / "absent.pdf")
