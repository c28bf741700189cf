"""The layout of the shared data folder (``../shared``), in one place.

`Settings.shared` (``OPENXIV_SHARED``) names the folder, `openxiv.corpus.settings.model.shared_dir` resolves
it (``../shared`` beside the checkout when unset); this module knows what lies inside: the listings,
the full texts, the PDFs and the gold sets. `openxiv demo`, the benchmark scripts and the tests
reach those files through `SharedData` instead of joining path segments themselves::

    shared = SharedData.default()
    shared.ingest_inputs          # (data/corpus, data/fulltext, data/pdfs)
    shared.gold("topic_queries_dev.jsonl")
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["SharedData"]


@dataclass(frozen=True, slots=True)
class SharedData:
    """Paths inside one shared data folder (nothing is checked or read until a caller opens a file)."""

    root: Path

    LISTINGS = ("listing-cs-2503-2606.jsonl.gz", "listing-astro-2504-2606.jsonl.gz")
    """The arXiv listing files of ``data/corpus``, the computer-science one first."""
    PLAINTEXT = "plaintext-9108-1612.jsonl.gz"
    UNARXIVE = "unarxive-2212-sample.jsonl.gz"
    TOPIC_SETS = ("topic_queries_dev.jsonl", "topic_queries_more_dev.jsonl")
    KNOWN_ITEM = "fulltext_known_item_dev.jsonl"

    @classmethod
    def default(cls) -> SharedData:
        """The folder `Settings.shared` names, else ``../shared`` beside the checkout."""
        from openxiv.corpus.settings.model import shared_dir

        return cls(shared_dir())

    @property
    def available(self) -> bool:
        """Whether the folder holds the ``data`` tree (tests skip, the demo stops, when it does not)."""
        return self.data.is_dir()

    def missing_message(self) -> str:
        return f"no shared data at {self.root}: put the data folder beside the checkout or set OPENXIV_SHARED"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def corpus(self) -> Path:
        """The listing metadata folder, ``data/corpus``."""
        return self.data / "corpus"

    @property
    def fulltext(self) -> Path:
        return self.data / "fulltext"

    @property
    def pdfs(self) -> Path:
        return self.data / "pdfs"

    @property
    def ingest_inputs(self) -> tuple[Path, Path, Path]:
        """What `openxiv ingest` reads for the whole corpus: listings, full texts, PDFs."""
        return (self.corpus, self.fulltext, self.pdfs)

    def listing(self, which: str = "cs") -> Path:
        """One listing file: ``cs`` or ``astro``."""
        names = {name.split("-")[1]: name for name in self.LISTINGS}
        return self.corpus / names[which]

    @property
    def listings(self) -> list[Path]:
        return [self.corpus / name for name in self.LISTINGS]

    @property
    def plaintext(self) -> Path:
        return self.fulltext / self.PLAINTEXT

    @property
    def unarxive(self) -> Path:
        return self.fulltext / self.UNARXIVE

    def gold(self, name: str = "") -> Path:
        """A file or folder under ``gold`` (``gold("taxobench")``); the folder itself without a name."""
        return self.root / "gold" / name if name else self.root / "gold"
