"""Settings: arguments > environment > TOML file in the user config folder > defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from paperfetch import ConfigurationError, Settings, load_settings
from paperfetch.config import default_config_path, user_agent_for


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
