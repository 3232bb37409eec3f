from __future__ import annotations

from research.pipeline import neardup

STORY = (
    "The city council voted on Tuesday to approve a new budget that raises spending on "
    "public transport by twelve percent, adds two hundred bus drivers and freezes fares "
    "for pensioners until the end of next year, the mayor's office said in a statement. "
    "Opposition members criticised the plan as unaffordable and warned that property taxes "
    "would have to rise to pay for it within three years."
)
EDITED = STORY.replace("Tuesday", "Wednesday").replace("twelve", "12") + " Reporting by A. Clerk."
OTHER = (
    "A new species of frog was discovered in the cloud forests of Ecuador by a team of "
    "biologists who spent four months surveying streams at night; the frog is bright green "
    "and smaller than a thumbnail, and its call resembles a cricket's chirp."
)


def test_it_estimates_high_similarity_for_a_lightly_edited_copy():
    assert neardup.similarity(neardup.signature(STORY), neardup.signature(EDITED)) >= 0.6
    assert neardup.similarity(neardup.signature(STORY), neardup.signature(OTHER)) < 0.2


def test_it_puts_copies_in_one_cluster_and_others_apart():
    items = [
        (key, neardup.signature(text)) for key, text in (("a", STORY), ("b", OTHER), ("c", EDITED))
    ]

    clusters = neardup.cluster(items)

    assert clusters["a"] == clusters["c"] != clusters["b"]


def test_it_joins_a_known_cluster():
    known = [("old", neardup.signature(STORY), "cluster-1")]

    clusters = neardup.cluster([("new", neardup.signature(EDITED))], known)

    assert clusters == {"new": "cluster-1"}


def test_it_is_deterministic_across_calls():
    first = neardup.signature(STORY)

    assert first == neardup.signature(STORY)
    assert neardup.band_keys(first) == neardup.band_keys(
        neardup.Signature.from_bytes(first.to_bytes())
    )
    assert len(neardup.band_keys(first)) == neardup.BANDS
