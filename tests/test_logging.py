"""paperfetch logs like a library: no handler or level of its own, the application's config decides."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import pytest

from paperfetch import FakeClock, HttpClient, enable_logging
from paperfetch.log import disable_logging
from paperfetch.testing import Reply, scripted_session


def _in_fresh_interpreter(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def test_importing_paperfetch_adds_no_handler_and_sets_no_level():
    out = _in_fresh_interpreter("""
        import logging
        before = list(logging.getLogger().handlers)
        import paperfetch, paperfetch.retriever, paperfetch.cli
        from paperfetch import HttpClient, Retriever
        HttpClient(); Retriever(out_dir="/tmp/paperfetch-logging-test", progress=False)
        package = logging.getLogger("paperfetch")
        kinds = sorted(type(h).__name__ for h in package.handlers)
        print("root", logging.getLogger().handlers == before, "package", kinds, package.level)
    """)
    assert "root True package ['NullHandler'] 0" in out


def test_basicconfig_debug_sees_paperfetch_records_without_verbosity():
    out = _in_fresh_interpreter("""
        import logging
        logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s %(message)s")
        from paperfetch import FakeClock, HttpClient
        from paperfetch.testing import Reply, scripted_session
        session, _ = scripted_session({"http://a.example/x": Reply(503, headers={"Retry-After": "900"})})
        HttpClient(session=session, clock=FakeClock(), respect_robots_txt=False).get("http://a.example/x")
    """)
    assert "WARNING paperfetch.http.client a.example asked for no requests" in out
    assert "INFO paperfetch.http.client" in out


def test_enable_logging_adds_one_handler_and_verbosity_is_sugar_for_it(capsys):
    package = logging.getLogger("paperfetch")
    try:
        enable_logging(logging.DEBUG)
        enable_logging("INFO")
        mine = [h for h in package.handlers if h.get_name() == "paperfetch.enable_logging"]
        assert len(mine) == 1 and package.level == logging.INFO
        disable_logging()
        assert package.level == logging.NOTSET and not [h for h in package.handlers if h.get_name()]
        session, _ = scripted_session({"http://a.example/x": Reply(503, headers={"Retry-After": "900"})})
        HttpClient(session=session, clock=FakeClock(), respect_robots_txt=False, verbosity=3).get("http://a.example/x")
        assert package.level == logging.DEBUG
        assert "[paperfetch] INFO paperfetch.http.client: backoff for a.example" in capsys.readouterr().err
    finally:
        disable_logging()


@pytest.mark.parametrize("verbosity", [0, 1])
def test_low_verbosity_touches_nothing(verbosity):
    package = logging.getLogger("paperfetch")
    before = (list(package.handlers), package.level)
    HttpClient(verbosity=verbosity)
    assert (list(package.handlers), package.level) == before
