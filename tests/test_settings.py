"""The settings contract: one declaration per ``OPENXIV_*`` variable, read the same way everywhere."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest
from click.testing import CliRunner

from openxiv.corpus.settings.model import Settings, get_settings, shared_dir
from openxiv.corpus.settings.sources import ConfigError, load


def test_constructor_never_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENXIV_PORT", "9999")
    assert Settings().port == 8000
    assert Settings(port=1).port == 1
    assert get_settings().port == 9999


def test_from_env_reads_only_the_given_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENXIV_PORT", "9999")
    s = Settings.from_env({"OPENXIV_DATA_DIR": "/tmp/d", "OPENXIV_WEIGHT_DENSE": "0.5"})
    assert s.port == 8000
    assert s.data_dir == Path("/tmp/d") and s.weight_dense == 0.5
    assert s.db_path == Path("/tmp/d/corpus.sqlite") and s.index_root == Path("/tmp/d/index")


def test_empty_values_mean_unset_and_unknown_names_are_ignored() -> None:
    s = Settings.from_env({"OPENXIV_HOST": "", "OPENXIV_DB": "", "OPENXIV_TEST_EMBCACHE": "x"})
    assert s == Settings()


def test_typed_values_and_home_expansion() -> None:
    s = Settings.from_env(
        {
            "OPENXIV_LENIENT_FILTERS": "yes",
            "OPENXIV_DB": "~/c.sqlite",
            "OPENXIV_SERVE_THREADS": "3",
            "OPENXIV_SERVE_CONCURRENCY": "4",
            "OPENXIV_REQUEST_BUDGET_S": "0",
        }
    )
    assert s.lenient_filters is True
    assert s.db == Path.home() / "c.sqlite"
    assert (s.serve_threads, s.serve_concurrency, s.request_budget_s) == (3, 4, 0.0)
    assert Settings.from_env({"OPENXIV_LENIENT_FILTERS": "off"}).lenient_filters is False


@pytest.mark.parametrize(
    ("name", "raw", "expected"),
    [
        ("OPENXIV_PORT", "http", "expected int"),
        ("OPENXIV_BM25_K1", "high", "expected float"),
        ("OPENXIV_LENIENT_FILTERS", "maybe", "expected bool"),
        ("OPENXIV_SERVE_THREADS", "many", "expected int"),
        ("OPENXIV_SERVE_CONCURRENCY", "0", "expected int greater than or equal to 1"),
        ("OPENXIV_SERVE_CONCURRENCY", "lots", "expected int"),
        ("OPENXIV_FUSION", "magic", r"unknown mode 'magic': expected one of bm25, .*"),
        ("OPENXIV_FUSION", "hybrid", "the default ranking must be named .*"),
    ],
)
def test_a_bad_value_is_a_config_error_naming_the_variable(name: str, raw: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=f"^{name}='{raw}': {expected}$"):
        Settings.from_env({name: raw})


def test_fusion_is_stored_in_the_engines_spelling() -> None:
    assert Settings.from_env({"OPENXIV_FUSION": " ZScore "}).fusion == "zscore"
    assert Settings.from_env({"OPENXIV_FUSION": "vector"}).fusion == "dense"


def test_serve_concurrency_is_not_silently_replaced() -> None:
    """Before, a bad ``OPENXIV_SERVE_CONCURRENCY`` fell back to the CPU count without a word; now the
    settings refuse it, and `serve_concurrency` reads the settings it is given."""
    from openxiv.service.http.app import serve_concurrency

    assert serve_concurrency(Settings.from_env({"OPENXIV_SERVE_CONCURRENCY": "3"})) == 3
    assert serve_concurrency(Settings.from_env({"OPENXIV_SERVE_CONCURRENCY": ""})) == max(
        2, os.cpu_count() or 2
    )
    for bad in ("0", "-1", "two"):
        with pytest.raises(ConfigError, match="OPENXIV_SERVE_CONCURRENCY"):
            Settings.from_env({"OPENXIV_SERVE_CONCURRENCY": bad})


def test_serve_threads() -> None:
    from openxiv.service.holder import serve_threads

    assert serve_threads(Settings.from_env({})) == 1
    assert serve_threads(Settings.from_env({"OPENXIV_SERVE_THREADS": "2"})) == 2
    assert serve_threads(Settings.from_env({"OPENXIV_SERVE_THREADS": "0"})) == 1
    with pytest.raises(ConfigError, match="OPENXIV_SERVE_THREADS='x'"):
        Settings.from_env({"OPENXIV_SERVE_THREADS": "x"})


def test_shared_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENXIV_SHARED", str(tmp_path))
    assert shared_dir() == tmp_path.resolve()
    monkeypatch.setenv("OPENXIV_SHARED", "")
    assert shared_dir().name == "shared"


def test_replace_ignores_none_and_rejects_unknown_names() -> None:
    s = Settings(port=1)
    assert s.replace(port=None, host="0.0.0.0") == Settings(port=1, host="0.0.0.0")
    assert s.replace() == s
    with pytest.raises(ConfigError, match=r"^unknown setting\(s\): bogus, nope$"):
        s.replace(bogus=1, nope=2)


def test_frozen_hashable_and_tokens_masked() -> None:
    s = Settings(api_token="tok-42", admin_token=None)
    with pytest.raises(ValueError):
        s.port = 1  # type: ignore[misc]
    assert hash(s) == hash(Settings(api_token="tok-42")) and s == Settings(api_token="tok-42")
    assert "tok-42" not in repr(s)
    d = s.as_dict()
    assert d["api_token"] == "***" and d["admin_token"] is None and d["data_dir"] == "data"
    assert list(d) == list(Settings.model_fields)
    assert pickle.loads(pickle.dumps(s)) == s  # settings cross process boundaries (workers, builds)


def test_every_setting_has_help() -> None:
    for name, field in Settings.model_fields.items():
        assert field.description and field.description.strip(), name


def test_provenance_env_over_dotenv_over_secrets_and_flags_over_all(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "openxiv_api_token").write_text("from-secret\n")
    (secrets / "openxiv_admin_token").write_text("admin-secret")
    dotenv = tmp_path / ".env"
    dotenv.write_text(
        "# docker-compose keeps other names here\nOPENXIV_SHARED_DIR=/elsewhere\nCOMPOSE_PROJECT_NAME=x\n"
        f"OPENXIV_PORT=8100\nOPENXIV_HOST=10.0.0.1\nOPENXIV_ADMIN_TOKEN=admin-dotenv\nOPENXIV_SECRETS_DIR={secrets}\n"
    )
    got = load(
        Settings, environ={"OPENXIV_PORT": "8200"}, env_file=dotenv, flags={"workers": 3, "embed": None}
    )
    s = got.settings
    assert (s.port, s.host, s.workers, s.api_token, s.admin_token) == (
        8200,
        "10.0.0.1",
        3,
        "from-secret",
        "admin-dotenv",
    )
    assert got.origin["port"] == "env"
    assert got.origin["host"] == ".env"
    assert got.origin["api_token"] == "secrets"
    assert got.origin["admin_token"] == ".env"
    assert got.origin["workers"] == "flag"
    assert got.origin["embed"] == "default"


def test_a_bad_dotenv_value_names_the_variable(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("OPENXIV_RRF_K=sixty\n")
    with pytest.raises(ConfigError, match="OPENXIV_RRF_K='sixty': expected int"):
        load(Settings, environ={}, env_file=dotenv)


def test_missing_secrets_dir_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="OPENXIV_SECRETS_DIR"):
        Settings.from_env({"OPENXIV_SECRETS_DIR": str(tmp_path / "nope")})


def test_from_env_reads_dotenv_in_the_working_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENXIV_RRF_K", raising=False)
    (tmp_path / ".env").write_text("OPENXIV_RRF_K=7\n")
    assert Settings.from_env().rrf_k == 7
    assert Settings.from_env({}).rrf_k == 60  # an explicit mapping is the only source


def _config(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    from openxiv.service.cli import cli

    clean = {k: "" for k in os.environ if k.startswith("OPENXIV_")}
    result = CliRunner().invoke(cli, ["config", *args], env={**clean, **env})
    return result.exit_code, result.output


def test_openxiv_config_json(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("OPENXIV_HOST=10.1.1.1\n")
    code, out = _config(["--json", "--port", "8300"], {"OPENXIV_API_TOKEN": "tok-77", "OPENXIV_RRF_K": "9"})
    assert code == 0, out
    doc = json.loads(out)
    assert doc["port"] == {"value": 8300, "source": "flag", "env": "OPENXIV_PORT"}
    assert doc["rrf_k"]["value"] == 9 and doc["rrf_k"]["source"] == "env"
    assert doc["host"] == {"value": "10.1.1.1", "source": ".env", "env": "OPENXIV_HOST"}
    assert doc["api_token"]["value"] == "***" and "tok-77" not in out
    assert doc["embed"]["source"] == "default"
    assert set(doc) == set(Settings.model_fields)


def test_openxiv_config_table_and_bad_value(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = _config([], {"OPENXIV_ADMIN_TOKEN": "very-secret"})
    assert code == 0, out
    assert "very-secret" not in out
    line = next(x for x in out.splitlines() if x.startswith("OPENXIV_ADMIN_TOKEN"))
    assert "***" in line and "env" in line
    code, out = _config([], {"OPENXIV_SERVE_CONCURRENCY": "0"})
    assert code == 2 and "OPENXIV_SERVE_CONCURRENCY='0'" in out
    code, out = _config(["--port", "http"], {})
    assert code == 2 and "--port" in out


def test_openxiv_config_secrets_dir_flag_reads_the_secrets(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "openxiv_admin_token").write_text("adm")
    code, out = _config(["--json", "--secrets-dir", str(tmp_path)], {})
    assert code == 0, out
    doc = json.loads(out)
    assert doc["admin_token"] == {"value": "***", "source": "secrets", "env": "OPENXIV_ADMIN_TOKEN"}
    assert doc["secrets_dir"]["source"] == "flag"
