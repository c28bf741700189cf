"""The run ledger: one record per call an agent made to a tagged openxiv server (docs/ledger.md).

`records` holds the record type, `store` the SQLite segments that keep them."""
