"""Report exports: Markdown, standalone HTML, PDF, the ZIP reproducibility bundle, citations.

Every format renders the same frozen report document (``reports.exports.document``), so
what one format says, all say.
"""

from __future__ import annotations
