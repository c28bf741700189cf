"""The experiment controls a server runs with, built once from the settings (`Controls.of`): the
ledger writer, the replayer, the cutoffs and the fault plan, each ``None`` when off."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from openxiv.corpus.ledger.store import LedgerError, LedgerWriter
from openxiv.corpus.settings.model import Settings
from openxiv.service.experiments.cutoffs import BadCutoffs, read_cutoffs
from openxiv.service.experiments.faults import BadSpec, FaultPlan, parse_faults
from openxiv.service.experiments.replay import Replayer

__all__ = ["BadControls", "Controls"]


class BadControls(ValueError):
    """A control that cannot start: the message names the setting (the CLI exits 2 with it)."""


@dataclass
class Controls:
    ledger: LedgerWriter | None = None
    replay: Replayer | None = None
    cutoffs: dict[str, date] | None = None
    faults: FaultPlan | None = None

    @classmethod
    def of(cls, settings: Settings) -> Controls | None:
        """The controls ``settings`` turn on, or ``None`` when none is (the plain server)."""
        if not (settings.ledger or settings.replay or settings.cutoffs or settings.faults):
            return None
        out = cls()
        try:
            if settings.faults:
                out.faults = parse_faults(settings.faults)
            if settings.cutoffs:
                out.cutoffs = read_cutoffs(settings.cutoffs)
            if settings.replay:
                out.replay = Replayer(settings.replay)
        except (BadSpec, BadCutoffs) as exc:
            raise BadControls(str(exc)) from exc
        except LedgerError as exc:
            raise BadControls(f"replay: {exc}") from exc
        if settings.ledger:
            try:
                out.ledger = LedgerWriter(
                    settings.ledger,
                    segment_bytes=settings.ledger_segment_mb << 20,
                    keep=settings.ledger_keep,
                    sync=settings.ledger_fsync,
                )
            except (OSError, LedgerError) as exc:
                raise BadControls(f"ledger: cannot write {settings.ledger}: {exc}") from exc
        return out

    def ceiling(self, question: str | None) -> date | None:
        if question is None or self.cutoffs is None:
            return None
        return self.cutoffs.get(question)

    def describe(self) -> dict[str, Any]:
        """What ``/healthz`` and ``/v1/index`` say is on (never a path on the server)."""
        out: dict[str, Any] = {}
        if self.ledger is not None:
            out["ledger"] = {"active": True, "segment": self.ledger.path.name}
        if self.replay is not None:
            out["replay"] = self.replay.describe()
        if self.cutoffs is not None:
            out["cutoffs"] = {"active": True, "questions": len(self.cutoffs)}
        if self.faults is not None:
            out["faults"] = self.faults.describe()
        return out

    def close(self) -> None:
        if self.ledger is not None:
            self.ledger.close()
