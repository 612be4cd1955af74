"""Settings: arguments > environment > TOML file in the user config folder > defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from paperfetch import ConfigurationError, Settings, load_settings
from paperfetch.config import clean_setting, default_config_path, user_agent_for


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_precedence_argument_environment_file_default(tmp_path):
    path = write(tmp_path, 'email = "file@example.org"\nout_dir = "from-file"\nworkers = 3\nmax_retries = 5\n')
    env = {"PAPERFETCH_OUT": "from-env", "PAPERFETCH_WORKERS": "7"}
    s = load_settings({"workers": 9, "email": None}, environ=env, config_path=path)
    assert (s.workers, s.out_dir, s.email, s.max_retries, s.delay_min_s) == (9, "from-env", "file@example.org", 5, None)
    assert s.origin == {
        "email": f"file {path}", "openalex_api_key": "default", "ncbi_api_key": "default", "s2_api_key": "default",
        "out_dir": "env PAPERFETCH_OUT",
        "workers": "argument", "delay_min_s": "default", "delay_max_s": "default", "max_retries": f"file {path}",
        "state": "default",
    }
    assert s.state == "sqlite"


def test_state_comes_from_paperfetch_state_and_a_redis_password_is_never_shown(tmp_path):
    s = load_settings({}, environ={"PAPERFETCH_STATE": "redis://:hunter2@127.0.0.1:6390/0"}, config_path=tmp_path / "none.toml")
    assert s.origin["state"] == "env PAPERFETCH_STATE"
    assert s.state == "redis://:hunter2@127.0.0.1:6390/0"
    assert "hunter2" not in repr(s) and "hunter2" not in s.shown("state")
    assert load_settings({"state": "memory"}, environ={"PAPERFETCH_STATE": "sqlite"}, config_path=tmp_path / "none.toml").state == "memory"


def test_ncbi_key_from_either_variable_paperfetch_first(tmp_path):
    missing = tmp_path / "none.toml"
    assert load_settings(environ={"NCBI_API_KEY": "k-ncbi-1"}, config_path=missing).ncbi_api_key == "k-ncbi-1"
    both = {"NCBI_API_KEY": "k-ncbi-1", "PAPERFETCH_NCBI_API_KEY": "k-pf-2"}
    s = load_settings(environ=both, config_path=missing)
    assert s.ncbi_api_key == "k-pf-2" and s.origin["ncbi_api_key"] == "env PAPERFETCH_NCBI_API_KEY"


def test_a_paperfetch_table_is_read_too(tmp_path):
    path = write(tmp_path, '[paperfetch]\nopenalex_api_key = "oa-key-1234"\ndelay_min_s = 2\n')
    s = load_settings(environ={}, config_path=path)
    assert s.openalex_api_key == "oa-key-1234" and s.delay_min_s == 2.0


@pytest.mark.parametrize("text, message", [
    ('emial = "x@y.org"\n', "unknown setting(s) ['emial']"),
    ('workers = "many"\n', "workers from file"),
    ("email = [\n", "cannot read the config file"),
    ("workers = true\n", "must be a number"),
])
def test_bad_files_name_the_problem(tmp_path, text, message):
    with pytest.raises(ConfigurationError, match=None) as info:
        load_settings(environ={}, config_path=write(tmp_path, text))
    assert message in str(info.value)


def test_bad_environment_value_names_the_variable(tmp_path):
    with pytest.raises(ConfigurationError) as info:
        load_settings(environ={"PAPERFETCH_DELAY_MIN": "soon"}, config_path=tmp_path / "none.toml")
    assert "env PAPERFETCH_DELAY_MIN" in str(info.value)


def test_frozen_masked_and_blank_means_unset(tmp_path):
    s = load_settings({"email": "   "}, environ={"PAPERFETCH_EMAIL": ""}, config_path=tmp_path / "none.toml")
    assert s.email is None and s.origin["email"] == "default"
    s = load_settings({"email": "me@example.org"}, environ={}, config_path=tmp_path / "none.toml")
    with pytest.raises(AttributeError):
        s.email = "x"  # type: ignore[misc]
    assert "me@example.org" not in repr(s) and "email='***'" in repr(s)
    assert s.identification.email == "me@example.org"
    assert Settings().max_retries == 3


def test_default_path_is_in_the_user_config_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("PAPERFETCH_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert default_config_path() == tmp_path / "xdg" / "paperfetch" / "config.toml"
    monkeypatch.setenv("PAPERFETCH_CONFIG", str(tmp_path / "other.toml"))
    assert default_config_path() == tmp_path / "other.toml"


def test_user_agent_names_the_project_and_the_contact():
    from paperfetch import __version__

    assert user_agent_for(None) == f"paperfetch/{__version__} (+https://github.com/paperfetch/paperfetch)"
    assert user_agent_for("me@example.org").endswith("; mailto:me@example.org)")


def test_the_environment_readers(monkeypatch, tmp_path):
    from paperfetch.config import env_cache_dir, env_endpoint_url, env_state

    assert env_state({}) == "sqlite" and env_state({"PAPERFETCH_STATE": ""}) == "sqlite"
    assert env_state({"PAPERFETCH_STATE": "memory"}) == "memory"
    assert env_endpoint_url("unpaywall", {}) is None and env_endpoint_url("doi", {"PAPERFETCH_DOI_URL": ""}) is None
    assert env_endpoint_url("doi", {"PAPERFETCH_DOI_URL": "http://127.0.0.1:9"}) == "http://127.0.0.1:9"
    assert env_cache_dir({}) is None
    assert env_cache_dir({"PAPERFETCH_CACHE_DIR": "~/c"}) == Path("~/c").expanduser()
    monkeypatch.setenv("PAPERFETCH_STATE", "redis://127.0.0.1:1/0")  # without a mapping: os.environ, when asked
    monkeypatch.setenv("PAPERFETCH_CROSSREF_URL", "http://127.0.0.1:8")
    monkeypatch.setenv("PAPERFETCH_CACHE_DIR", str(tmp_path))
    assert env_state() == "redis://127.0.0.1:1/0" and env_endpoint_url("crossref") == "http://127.0.0.1:8"
    assert env_cache_dir() == tmp_path


def test_config_is_the_one_reader_of_the_environment():
    import re

    import paperfetch

    package = Path(paperfetch.__file__).parent
    readers = {path.relative_to(package).as_posix() for path in package.rglob("*.py")
               if re.search(r"os\.environ|os\.getenv", path.read_text(encoding="utf-8"))}
    assert readers == {"config.py"}


# ---------------------------------------------------------------------------- control characters

CONTROL = st.sampled_from([*map(chr, range(0x00, 0x20)), "\x7f", "\x85", "\u2028", "\u2029"])
PLAIN = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=20)
SECRETS = ("email", "openalex_api_key", "ncbi_api_key")
TEXT_SETTINGS = (*SECRETS, "out_dir", "state")


@pytest.fixture
def own_redactor(monkeypatch):
    """The settings reader registers every secret it reads with the process's redactor, which only grows:
    generated values ("null", ", \"") would then be masked in every later test's output (cassette bodies)."""
    from paperfetch import redact

    monkeypatch.setattr(redact, "REDACTOR", redact.Redactor())


@hypothesis_settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(TEXT_SETTINGS), before=PLAIN, control=CONTROL, after=PLAIN)
def test_a_control_character_in_any_setting_is_refused_naming_it_never_showing_a_secret(tmp_path, own_redactor, name,
                                                                                           before, control, after):
    value = f"{before}{control}{after}"
    with pytest.raises(ConfigurationError) as caught:
        clean_setting(name, value)
    assert name in str(caught.value) and f"U+{ord(control):04X}" in str(caught.value)
    if name in SECRETS:
        assert value not in str(caught.value) and "(value not shown)" in str(caught.value)
    # the settings reader (CLI, config file, environment) refuses it the same way
    with pytest.raises(ConfigurationError, match=name):
        load_settings({name: value}, environ={}, config_path=tmp_path / "none.toml")


@hypothesis_settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(TEXT_SETTINGS), value=PLAIN, space=st.sampled_from([" ", "\n", "\r\n", "\t", " \n "]))
def test_surrounding_whitespace_of_any_setting_is_stripped(tmp_path, own_redactor, name, value, space):
    assert clean_setting(name, f"{space}{value}{space}") == value
    loaded = load_settings({name: f"{value}{space}"}, environ={}, config_path=tmp_path / "none.toml")
    assert getattr(loaded, name) == value


@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(SECRETS), before=PLAIN, control=CONTROL)
def test_the_retriever_refuses_a_secret_with_a_control_character_without_showing_it(own_redactor, field, before, control):
    from paperfetch import Retriever

    secret = f"{before}{control}X-Injected: 1"
    with pytest.raises(ConfigurationError) as caught:
        Retriever(**{field: secret}, state="memory", cache=False, progress=False)
    assert field in str(caught.value) and secret not in str(caught.value)


@pytest.mark.parametrize("kwargs, named", [
    ({"out_dir": "PDFs\n/x"}, "out_dir"),
    ({"endpoints": {"unpaywall": "http://127.0.0.1:1\r\nX-Injected: 1"}}, "endpoints['unpaywall']"),
    ({"state": "redis://:hunter2@127.0.0.1:1/0\r\n0"}, "state"),
])
def test_the_retriever_refuses_other_settings_with_control_characters(kwargs, named):
    from paperfetch import Retriever

    with pytest.raises(ConfigurationError) as caught:
        Retriever(**kwargs, cache=False, progress=False)
    assert named in str(caught.value) and "hunter2" not in str(caught.value)


def test_an_email_with_its_trailing_newline_gives_a_row_per_input_within_seconds(tmp_path):
    import time

    from paperfetch import Retriever
    from paperfetch.demo import DemoWorld

    with DemoWorld(base_ip=96) as world:
        started = time.monotonic()
        with Retriever(email="me@uni.edu\n", out_dir=tmp_path / "out",
                       endpoints=world.endpoints, state="memory", progress=False, verbosity=0,
                       http_options={"network_retry_base_s": 0.05, "rate_limit_min_s": 0.05, "rate_limit_max_s": 0.1}) as r:
            assert r.identification.email == "me@uni.edu"
            frame = r.download(["10.5555/demo.fast", "10.5555/demo.unknown"])
        assert time.monotonic() - started < 30
    assert list(frame["status"].astype(str)) == ["downloaded", "not_found"]
