"""Mining reads the passages beside the retrieved ones: the finding a search was after often
sits a passage or two on from the background or aim sentence that shared its words."""

from __future__ import annotations

import pytest

from ledger.models import Candidate, Passage, PassageKind
from ledger.readers import neighbour_passages
from research.pipeline.retrieve.records import EvidencePools
from research.stages.mine import MINE_NEIGHBOURS, mine_subquestion, top_passages
from tests.factories import make_passage, make_plan, make_run, make_snapshot

pytestmark = pytest.mark.django_db

PARTS = (
    "BACKGROUND Aspirin is widely taken for fever in adults. ",
    "METHODS We randomly assigned 400 adults with fever to aspirin or placebo. ",
    "RESULTS In the trial of 400 adults, aspirin reduced fever within four hours. ",
    "CONCLUSIONS Aspirin relieves fever in adults. ",
    "FUNDING The trial was funded by a public grant. ",
)


def chunks(parts: tuple[str, ...], title: str) -> list[Passage]:
    """One snapshot of ``parts``, one chunk passage per part, in reading order."""
    snapshot = make_snapshot("".join(parts), title=title)
    out, start = [], 0
    for ordinal, part in enumerate(parts):
        out.append(make_passage(snapshot, start, start + len(part.strip()), ordinal=ordinal))
        start += len(part)
    return out


def test_nearest_passages_of_the_same_document_come_first():
    doc = chunks(PARTS, "Aspirin trial")
    other = chunks(PARTS, "Another trial")
    got = neighbour_passages([doc[0].pk], 3)
    assert got == [doc[1].pk, doc[2].pk, doc[3].pk]
    assert not set(got) & {p.pk for p in other}


def test_the_limit_holds_and_ties_go_to_the_better_ranked_passage():
    doc = chunks(PARTS, "Aspirin trial")
    other = chunks(PARTS, "Another trial")
    got = neighbour_passages([other[2].pk, doc[4].pk], 3)
    # distance 1 first: both of the first passage's neighbours, then the second's
    assert got == [other[1].pk, other[3].pk, doc[3].pk]
    assert neighbour_passages([doc[0].pk], 0) == []
    assert neighbour_passages([], 5) == []


def test_retrieved_passages_and_other_kinds_are_not_neighbours():
    doc = chunks(PARTS, "Aspirin trial")
    section = make_passage(doc[0].snapshot, kind=PassageKind.SECTION, ordinal=1)
    got = neighbour_passages([doc[1].pk, doc[2].pk], 10)
    assert doc[1].pk not in got and doc[2].pk not in got
    assert section.pk not in got
    assert got == [doc[0].pk, doc[3].pk, doc[4].pk]


def test_the_miner_reads_the_retrieved_passages_first_then_their_neighbours():
    doc = chunks(PARTS, "Aspirin trial")
    pools = EvidencePools.from_json(
        {"support": [{"passage_id": doc[0].pk, "source_id": doc[0].source_id, "score": 0.5}]}
    )
    passages = top_passages(pools)
    assert [int(p.passage_id) for p in passages] == [p.pk for p in doc][: 1 + MINE_NEIGHBOURS]
    assert passages[0].score == 0.5 and all(p.score == 0.0 for p in passages[1:])


def test_a_finding_beside_the_retrieved_background_becomes_a_claim(author, settings):
    """Without the neighbours the retrieved passage holds only background, and the run
    would have no claim at all."""
    settings.LLM_BASE_URL = ""
    doc = chunks(PARTS, "Aspirin trial")
    run = make_run(make_plan(author, "Does aspirin reduce fever in adults?"), state="mining")
    pools = {"support": [{"passage_id": doc[0].pk, "source_id": doc[0].source_id, "score": 0.5}]}
    kept = mine_subquestion(run, "sq1", EvidencePools.from_json(pools))
    texts = {c.text for c in kept}
    assert any("aspirin reduced fever" in t for t in texts), texts
    assert not any(t.startswith("BACKGROUND") for t in texts)
    assert Candidate.objects.filter(run=run, text__contains="funded by a public grant").exists()
