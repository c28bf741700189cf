"""Where settings come from: defaults, a secrets directory, ``./.env``, the environment, flags.

Each source is read by its pydantic-settings reader, in increasing priority, and every value keeps
the name of the source it came from, so ``openxiv config`` can say why a setting has its value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_settings import DotEnvSettingsSource, EnvSettingsSource, SecretsSettingsSource

from openxiv.corpus.config import ConfigError, Settings, env_name, validated

__all__ = ["DOTENV", "Loaded", "load"]

DOTENV = Path(".env")
"""The ``.env`` file read by `load` when it reads the process environment (docker-compose's own
``.env`` may hold other names: they are ignored)."""


@dataclass(frozen=True)
class Loaded:
    """Effective settings and, per field, where its value came from."""

    settings: Settings
    origin: dict[str, str]
    """``default``, ``env``, ``.env``, ``secrets`` or ``flag``."""


class _MappingEnvSource(EnvSettingsSource):
    """The environment source over a given mapping instead of ``os.environ``."""

    def __init__(self, settings_cls: type[Settings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {k.lower(): v for k, v in self._environ.items() if v != ""}


def load(
    cls: type[Settings] = Settings,
    environ: Mapping[str, str] | None = None,
    *,
    env_file: Path | None = None,
    flags: Mapping[str, Any] | None = None,
) -> Loaded:
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
    if real_flags:
        settings = settings.replace(**real_flags)
        origin.update(dict.fromkeys(real_flags, "flag"))
    return Loaded(settings, origin)


def _known(cls: type[Settings], found: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in found.items() if k in cls.model_fields and v not in ("", None)}


def _secrets(cls: type[Settings], folder: Path) -> dict[str, Any]:
    if not folder.is_dir():
        raise ConfigError(f"{env_name('secrets_dir')}={str(folder)!r}: expected a directory")
    found = SecretsSettingsSource(cls, secrets_dir=folder)()
    return {k: v.strip() if isinstance(v, str) else v for k, v in _known(cls, found).items()}


def _expand(cls: type[Settings], name: str, raw: Any) -> Any:
    """``~`` in a path read from text means the home directory, as in a shell."""
    if isinstance(raw, str) and "Path" in str(cls.model_fields[name].annotation):
        return Path(raw).expanduser()
    return raw
