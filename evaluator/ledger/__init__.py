"""What the run ledger makes measurable (`openxiv eval ledger`, `openxiv runs`; docs/experiments.md):
`trace` follows one question's calls, `score` makes the report, `timeline` the HTML timelines,
`cli` the commands. The ledger is read through `openxiv.corpus.ledger` only.
"""
