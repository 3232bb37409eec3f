"""``bench_runs --library-bench``: a tiny benchmark library written in a tmp dir (three short
documents, SOURCES.md, questions.json), checked, ingested and scored."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ledger.models import Library, Snapshot
from research.bench.library_manifest import GoldClaim, LibraryQuestion, load_questions
from research.bench.library_scoring import (
    LibraryFigures,
    MinedClaim,
    SetAside,
    Span,
    find_quote,
    locate_gold,
    reader_share,
    score_question,
)
from research.management.library_bench import checked_docs, ingest_library

DOCUMENTS = {
    "meals.md": (
        "# Free school meals\n\n"
        "The programme served lunches in 400 primary schools from 2019 to 2022.\n\n"
        "Free school meals raised attendance by 3 percent in the schools that took part.\n\n"
        "The effect on reading scores was small and not statistically significant.\n"
    ),
    "buses.md": (
        "# School buses\n\n"
        "Districts that added morning bus routes cut late arrivals by a fifth.\n\n"
        "Bus routes cost more per pupil in rural districts than in towns.\n"
    ),
    "tutoring.md": (
        "# Tutoring\n\n"
        "Small-group tutoring three times a week improved mathematics results by a grade.\n\n"
        "Tutoring gains faded within a year once the sessions stopped.\n"
    ),
}
ATTENDANCE = "Free school meals raised attendance by 3 percent in the schools that took part."
PROGRAMME = "The programme served lunches in 400 primary schools from 2019 to 2022."


def gold(quote: str, file: str = "meals.md", kind: str = "finding") -> dict[str, str]:
    return {"claim": quote, "file": file, "quote": quote, "kind": kind}


QUESTIONS = [
    {
        "question": "Do free school meals raise school attendance?",
        "scope": "primary schools; attendance and reading scores",
        "gold": [
            gold(ATTENDANCE),
            gold(PROGRAMME),
            gold("The effect on reading scores was small", kind="limitation"),
            gold("Districts that added morning bus routes cut late arrivals", "buses.md"),
        ],
    },
    {
        "question": "Do school bus routes reduce late arrivals?",
        "scope": "school transport",
        "gold": [
            gold("cut late arrivals by a fifth", "buses.md"),
            gold("Bus routes cost more per pupil in rural districts", "buses.md", "limitation"),
            gold(ATTENDANCE),
            gold("Tutoring gains faded within a year", "tutoring.md", "counter"),
        ],
    },
    {
        "question": "Does small-group tutoring improve mathematics results?",
        "scope": "tutoring",
        "gold": [
            gold("improved mathematics results by a grade", "tutoring.md"),
            gold("Tutoring gains faded within a year", "tutoring.md", "limitation"),
            gold(ATTENDANCE),
            gold("cut late arrivals by a fifth", "buses.md"),
        ],
    },
    {
        "question": "Which school programmes improve attendance or punctuality?",
        "scope": "attendance",
        "gold": [
            gold(ATTENDANCE),
            gold("cut late arrivals by a fifth", "buses.md"),
            gold(PROGRAMME),
            gold("Tutoring gains faded within a year", "tutoring.md", "counter"),
        ],
    },
    {
        "question": "What are the limitations of school meal and tutoring programmes?",
        "scope": "limitations",
        "gold": [
            gold("The effect on reading scores was small", kind="limitation"),
            gold("Tutoring gains faded within a year", "tutoring.md", "limitation"),
            gold("Bus routes cost more per pupil in rural districts", "buses.md", "limitation"),
            gold(ATTENDANCE),
        ],
    },
]


def write_library(root: Path, name: str = "tiny-bench") -> Path:
    """A benchmark library folder with its documents in ``docs/`` and a matching manifest."""
    library = root / name
    (library / "docs").mkdir(parents=True)
    rows = [
        "| # | file | title | publisher | origin | licence | bytes | sha256 |",
        "|---" * 8 + "|",
    ]
    for number, (file, text) in enumerate(DOCUMENTS.items(), start=1):
        data = text.encode()
        (library / "docs" / file).write_bytes(data)
        digest = hashlib.sha256(data).hexdigest()
        rows.append(f"| {number} | `{file}` | t | p | o | CC0 | {len(data):,} | `{digest}` |")
    (library / "SOURCES.md").write_text("# Sources\n\n" + "\n".join(rows) + "\n")
    (library / "questions.json").write_text(json.dumps(QUESTIONS, indent=1))
    return library


def test_it_names_the_file_whose_bytes_differ_from_the_manifest(tmp_path):
    library = write_library(tmp_path)
    (library / "docs" / "buses.md").write_text(DOCUMENTS["buses.md"].replace("fifth", "third"))
    (library / "docs" / "notes.md").write_text("not in the manifest")

    with pytest.raises(CommandError) as caught:
        call_command("bench_runs", "--library-bench", str(library))

    message = str(caught.value)
    assert "tiny-bench: the documents in" in message
    assert "buses.md: sha256 differs from SOURCES.md" in message
    assert "notes.md: in" in message and "but not in SOURCES.md" in message
    assert "meals.md" not in message and "tutoring.md" not in message


def test_it_names_a_file_the_manifest_lists_but_the_folder_lacks(tmp_path):
    library = write_library(tmp_path)
    (library / "docs" / "tutoring.md").unlink()

    with pytest.raises(CommandError, match=r"tutoring\.md: listed in SOURCES\.md but missing"):
        checked_docs(library)


@pytest.mark.django_db
def test_it_ingests_the_library_once_through_the_upload_service(tmp_path):
    folder, manifest = checked_docs(write_library(tmp_path))

    first = ingest_library("tiny-bench", folder, manifest)
    again = ingest_library("tiny-bench", folder, manifest)

    assert sorted(first) == ["buses.md", "meals.md", "tutoring.md"]
    assert {r.status for r in first.values()} == {"added"}
    assert {r.status for r in again.values()} == {"unchanged"}
    assert {f: r.snapshot_id for f, r in again.items()} == {
        f: r.snapshot_id for f, r in first.items()
    }
    library = Library.objects.get(name="tiny-bench", owner=None)
    assert library.public and library.sources.count() == 3
    snapshot_id = first["meals.md"].snapshot_id
    assert snapshot_id is not None
    snapshot = Snapshot.objects.get(pk=snapshot_id)
    assert snapshot.raw_sha256 == manifest["meals.md"].sha256
    assert ATTENDANCE in snapshot.text


def question_of(*quotes: str) -> LibraryQuestion:
    return LibraryQuestion("q", "s", tuple(GoldClaim(q, "meals.md", q, "finding") for q in quotes))


def test_it_recovers_a_gold_claim_only_when_an_anchor_covers_half_its_quote():
    text = DOCUMENTS["meals.md"]
    question = question_of(ATTENDANCE, PROGRAMME, "a quote extraction lost")
    located = locate_gold(question, {"meals.md": (7, text)})
    start = text.find(ATTENDANCE)
    half = (len(ATTENDANCE) + 1) // 2  # the fewest characters that are at least half the quote
    claims = [
        MinedClaim("covers the second half", 0.9, (Span(7, start + len(ATTENDANCE) - half, 900),)),
        MinedClaim("covers just under half", 0.8, (Span(7, start, start + half - 1),)),
        MinedClaim("same offsets, other snapshot", 0.7, (Span(8, start, start + len(ATTENDANCE)),)),
    ]

    miss = text.find(PROGRAMME)
    dropped = SetAside(Span(7, miss, miss + len(PROGRAMME)), "dropped", "a statement of method")

    result = score_question(question, claims, located, wall_s=1.0, set_aside=[dropped])

    assert located[0] == Span(7, start, start + len(ATTENDANCE)) and located[2] is None
    assert [r.gold for r in result.ranked] == [(1,), (), ()]
    assert result.recovered == {1} and result.not_in_snapshot == 1
    assert [result.fate(n) for n in (1, 2, 3)] == [
        "yes",
        "no: dropped at mining (a statement of method)",
        "quote not in snapshot",
    ]
    figures = LibraryFigures([result]).figures()
    assert figures["gold_recovered"] == 1 and figures["gold"] == 3
    assert figures["reader_keeps_share"] is None


def test_it_finds_a_gold_quote_copied_with_markup_the_snapshot_renders_as_text():
    # the gold quote was copied from the .rst file; extraction kept the words, not the markup
    snapshot = "Set the PYTHON_GIL  environment variable or pass -X gil to run it."
    quote = "Set the :envvar:`PYTHON_GIL` environment variable or pass ``-X gil``"
    start, end = find_quote(snapshot, quote) or (0, 0)
    assert snapshot[start:end] == "Set the PYTHON_GIL  environment variable or pass -X gil"
    assert find_quote(snapshot, "pass -X gil") == (44, 55)  # exact first
    assert find_quote(snapshot, "pass ``-X nogil``") is None


def test_it_counts_recall_at_10_among_the_ten_most_relevant_claims_only():
    text = DOCUMENTS["meals.md"]
    question = question_of(ATTENDANCE, PROGRAMME)
    located = locate_gold(question, {"meals.md": (1, text)})
    filler = [MinedClaim(f"filler {n}", 0.5, ()) for n in range(10)]
    late = MinedClaim("the hit, ranked 11th", 0.1, (Span(1, text.find(ATTENDANCE), len(text)),))

    result = score_question(question, [late, *filler], located, wall_s=0.0)

    assert result.recovered == {1} and result.recovered_at_10 == set()
    assert result.ranked[-1].claim is late and result.ranked[-1].rank == 11


def test_it_computes_the_reader_share_only_from_marks():
    question = question_of(ATTENDANCE)
    claims = [MinedClaim(t, 0.5, ()) for t in ("kept", "dropped", "not marked")]
    result = score_question(question, claims, locate_gold(question, {}), wall_s=0.0)

    share = reader_share([result], {"kept": True, "dropped": False, "elsewhere": True})

    assert (share.kept, share.marked, share.unmarked, share.share) == (1, 2, 1, 0.5)
    assert LibraryFigures([result]).figures({})["reader_keeps_share"] is None


def test_a_mark_for_one_question_wins_over_a_mark_by_text_alone():
    question = question_of(ATTENDANCE)
    claims = [MinedClaim(t, 0.5, ()) for t in ("shared  claim", "other")]
    first, second = (
        score_question(question, claims, locate_gold(question, {}), wall_s=0.0) for _ in "12"
    )
    marks = {"shared claim": False, "Q2: shared claim": True, "other": True}

    share = reader_share([first, second], marks)

    # Q1: shared claim dropped, other kept; Q2: shared claim kept (its own mark), other kept
    assert (share.kept, share.marked, share.unmarked) == (3, 4, 0)


@pytest.mark.slow
@pytest.mark.django_db
def test_it_scores_each_question_of_a_library_through_the_pipeline(tmp_path):
    library = write_library(tmp_path)
    out, claims_md = tmp_path / "bench.json", tmp_path / "claims.md"

    call_command(
        "bench_runs",
        "--library-bench",
        str(library),
        "--json",
        str(out),
        "--claims-out",
        str(claims_md),
    )

    figures = json.loads(out.read_text())
    assert figures["questions"] == 5 and figures["library"] == "tiny-bench"
    assert 0 < figures["gold_recovered"] < figures["gold"] == 20
    assert figures["gold_not_in_snapshot"] == 0
    assert figures["reader_keeps_share"] is None
    files = {n: g.file for n, g in enumerate(load_questions(library)[0].gold, start=1)}
    first = figures["details"][0]
    assert first["claims"] == len(first["ranked"]) > 0
    for number in first["gold_recovered"]:  # each recovery names its claim, in its gold file
        claims = [c for c in first["ranked"] if number in c["gold"]]
        assert claims and all(c["anchor_file"] == files[number] for c in claims)
    for number, fate in enumerate(first["gold_fate"], start=1):
        assert fate.startswith("yes" if number in first["gold_recovered"] else "no: ")
    text = claims_md.read_text()
    assert "| # | claim | relevance | anchor file | gold | keep? |" in text
    assert "**not computed**" in text
