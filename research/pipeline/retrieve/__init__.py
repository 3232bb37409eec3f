"""Retrieval stages over typed records: sparse terms, fusion, diversity, reranking.

Pure functions, no ORM: ``research.retrieval`` loads candidates from Postgres and calls
these; the benchmark and the tests call them too.
"""

from __future__ import annotations
