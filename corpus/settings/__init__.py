"""openxiv's settings, in one package: every ``OPENXIV_*`` variable and every command-line flag.

- `openxiv.corpus.settings.model`: the `Settings` model, each setting declared once (type, default,
  help); ``Settings.from_env()`` reads them, ``settings.replace(**flags)`` applies flags.
- `openxiv.corpus.settings.sources`: where values come from (defaults, secrets, ``.env``, environment,
  flags), `ConfigError`, and the provenance ``openxiv config`` shows.
- `openxiv.corpus.settings.options`: the click vocabulary every command builds its options from
  (``--db``, ``--index``, ``--json [PATH]``, setting-backed flags) and the exit statuses.
- `openxiv.corpus.settings.command`: the ``openxiv config`` command.
- `openxiv.corpus.settings.modes`: the ranking-mode names (``fusion``, a search's ``mode``).

It lives in `corpus`, the bottom layer, so every other part can read settings without climbing.
"""
