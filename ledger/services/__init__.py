"""Services that write ledger rows: one module per topic (ingest, claims, …)."""
