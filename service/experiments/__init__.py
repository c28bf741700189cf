"""Experiments (issue 40; docs/ledger.md): the run ledger, replay, per-question cutoffs and fault
injection, all off unless configured.

`tags` reads a call's run and question, `context` carries them (and the question's date ceiling) to
the use cases, `describe` turns a call into a `openxiv.corpus.ledger.records.LedgerRecord`, `cutoffs`,
`faults` and `replay` are the three controls, `controls` builds them from the settings and `asgi` is
the middleware both network fronts put in front of their routes when any of them is on."""
