"""Which packages the wheel holds (everything else is declared in pyproject.toml).

The repository keeps one top-level folder per part (corpus, indexer, service, evaluator); each
installs as ``openxiv.<part>``. Their sub-packages are *found*, not listed: every folder under a
part is a (namespace) package, the folders that only hold data (templates, static) included, so a
folder moved or added inside a part ships without editing a list, and setuptools has no
"importable package absent from packages" to warn about. The data files themselves are declared by
``[tool.setuptools.package-data]`` in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

PARTS = ("corpus", "indexer", "service", "evaluator")


def _packages() -> list[str]:
    found = []
    for part in PARTS:
        found.append(f"openxiv.{part}")
        subs = find_namespace_packages(where=part, exclude=["__pycache__", "*.__pycache__"])
        found += [f"openxiv.{part}.{sub}" for sub in subs]
    return found


setup(packages=_packages(), package_dir={f"openxiv.{part}": part for part in PARTS})
