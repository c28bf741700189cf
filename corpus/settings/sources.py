"""Where settings come from: defaults, a secrets directory, ``./.env``, the environment, flags.

Each source is read by its pydantic-settings reader, in increasing priority, and every value keeps
the name of the source it came from, so ``openxiv config`` can say why a setting has its value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import ValidationError
from pydantic_settings import BaseSettings, DotEnvSettingsSource, EnvSettingsSource, SecretsSettingsSource

__all__ = ["DOTENV", "ENV_PREFIX", "ConfigError", "Loaded", "env_name", "load", "validated"]

ENV_PREFIX = "OPENXIV_"

S = TypeVar("S", bound=BaseSettings)
"""The settings class read (`openxiv.corpus.settings.model.Settings`); this module never imports it,
so the model can load itself through `load` without an import cycle."""


class ConfigError(ValueError):
    """A setting has a value that cannot be used; the message names the variable."""


DOTENV = Path(".env")
"""The ``.env`` file read by `load` when it reads the process environment (docker-compose's own
``.env`` may hold other names: they are ignored)."""


@dataclass(frozen=True)
class Loaded(Generic[S]):
    """Effective settings and, per field, where its value came from."""

    settings: S
    origin: dict[str, str]
    """``default``, ``env``, ``.env``, ``secrets`` or ``flag``."""


class _MappingEnvSource(EnvSettingsSource):
    """The environment source over a given mapping instead of ``os.environ``."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {k.lower(): v for k, v in self._environ.items() if v != ""}


def load(
    cls: type[S],
    environ: Mapping[str, str] | None = None,
    *,
    env_file: Path | None = None,
    flags: Mapping[str, Any] | None = None,
) -> Loaded[S]:
    """Settings from ``environ`` (default: ``os.environ`` plus ``./.env`` and the secrets dir) and flags.

    An explicit ``environ`` is the only source read unless ``env_file`` is given too: tests and child
    processes get exactly what they pass.
    """
    import os

    if environ is None:
        environ = os.environ
        env_file = DOTENV if env_file is None else env_file
    layers: list[tuple[str, dict[str, Any]]] = []
    if env_file is not None and Path(env_file).is_file():
        layers.append((".env", _known(cls, DotEnvSettingsSource(cls, env_file=env_file)())))
    layers.append(("env", _known(cls, _MappingEnvSource(cls, environ)())))
    found_dirs = [
        (flags or {}).get("secrets_dir"),
        *(values.get("secrets_dir") for _, values in reversed(layers)),
    ]
    secrets_dir = next((d for d in found_dirs if d), None)
    if secrets_dir:
        layers.insert(0, ("secrets", _secrets(cls, Path(str(secrets_dir)).expanduser())))
    values: dict[str, Any] = {}
    origin = dict.fromkeys(cls.model_fields, "default")
    for source, found in layers:
        for name, raw in found.items():
            values[name] = _expand(cls, name, raw)
            origin[name] = source
    settings = validated(cls, values, origin)
    real_flags = {k: v for k, v in (flags or {}).items() if v is not None}
    if real_flags:  # as `Settings.replace` applies them
        unknown = set(real_flags) - set(cls.model_fields)
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        settings = validated(cls, {**values, **real_flags}, dict.fromkeys(real_flags, "flag"))
        origin.update(dict.fromkeys(real_flags, "flag"))
    return Loaded(settings, origin)


def _known(cls: type[BaseSettings], found: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in found.items() if k in cls.model_fields and v not in ("", None)}


def _secrets(cls: type[BaseSettings], folder: Path) -> dict[str, Any]:
    if not folder.is_dir():
        raise ConfigError(f"{env_name('secrets_dir')}={str(folder)!r}: expected a directory")
    found = SecretsSettingsSource(cls, secrets_dir=folder)()
    return {k: v.strip() if isinstance(v, str) else v for k, v in _known(cls, found).items()}


def _expand(cls: type[BaseSettings], name: str, raw: Any) -> Any:
    """``~`` in a path read from text means the home directory, as in a shell."""
    if isinstance(raw, str) and "Path" in str(cls.model_fields[name].annotation):
        return Path(raw).expanduser()
    return raw


def env_name(field: str) -> str:
    """The environment variable of a setting: ``data_dir`` -> ``OPENXIV_DATA_DIR``."""
    return ENV_PREFIX + field.upper()


def validated(cls: type[S], values: dict[str, Any], origin: dict[str, str]) -> S:
    """``cls(**values)``, with a pydantic error turned into a `ConfigError` naming the variable (or flag)."""
    try:
        return cls(**values)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = str(err["loc"][0]) if err["loc"] else "?"
        field = cls.model_fields.get(name)
        label = env_name(name) if origin.get(name, "env") != "flag" else f"--{name.replace('_', '-')}"
        expected = _type_label(field.annotation if field else None)
        if err["type"] == "value_error":
            raise ConfigError(f"{label}={values.get(name)!r}: {exc.errors()[0]['ctx']['error']}") from exc
        if err["type"] in {"greater_than_equal", "greater_than", "less_than_equal", "less_than"}:
            expected += " " + err["msg"].removeprefix("Input should be ")
        raise ConfigError(f"{label}={values.get(name)!r}: expected {expected}") from exc


def _type_label(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) or str(annotation)
    return text.replace(" | None", "").replace("pathlib.", "")
