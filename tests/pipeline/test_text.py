from __future__ import annotations

from research.pipeline.language.direction import negated
from research.pipeline.language.lexicon import hedges, is_meaningful_quote
from research.pipeline.language.quantities import quantities
from research.pipeline.language.sentences import split_sentences
from research.pipeline.text import claim_fingerprint


def test_it_splits_sentences_at_exact_offsets_without_breaking_abbreviations():
    text = "Aspirin reduces fever (Smith et al. 2001). It was introduced in 1899.  Dose: 5 mg."
    spans = split_sentences(text)
    pieces = [text[a:b] for a, b in spans]
    assert pieces == [
        "Aspirin reduces fever (Smith et al. 2001).",
        "It was introduced in 1899.",
        "Dose: 5 mg.",
    ]


def test_it_splits_sentences_without_breaking_abbreviations_or_decimals():
    text = "Levels fell by 1.8 mg (e.g. in Fig. 2). Smith et al. found no change. Is it real? Yes."

    spans = [text[s:e] for s, e in split_sentences(text)]

    assert spans == [
        "Levels fell by 1.8 mg (e.g. in Fig. 2).",
        "Smith et al. found no change.",
        "Is it real?",
        "Yes.",
    ]


def test_it_splits_only_inside_the_range_asked_for_with_absolute_offsets():
    text = "Title line\n\nFirst finding holds. Second one too.  "

    spans = split_sentences(text, 12, len(text))

    assert [text[a:b] for a, b in spans] == ["First finding holds.", "Second one too."]
    assert spans[0][0] == 12


def test_it_fingerprints_the_normalized_text():
    assert claim_fingerprint("Aspirin  reduces\nFEVER.") == claim_fingerprint(
        "aspirin reduces fever."
    )
    assert claim_fingerprint("Aspirin reduces fever.") != claim_fingerprint("Aspirin cures fever.")


def test_it_reads_numbers_with_units_and_leaves_years_alone():
    found = {
        (q.value, q.unit) for q in quantities("In 2001, 5 mg/kg was given to 120 patients (30%).")
    }
    assert found == {(5.0, "mg/kg"), (120.0, "patients"), (30.0, "%")}


def test_it_detects_negation_and_hedges():
    assert negated("There was no significant difference between groups.")
    assert not negated("Aspirin reduced fever.")
    assert hedges("These results suggest that X may help.") == ["may", "suggest"]


def test_it_refuses_quotes_too_short_to_mean_anything():
    assert not is_meaningful_quote("the")
    assert not is_meaningful_quote("in the year 2020 of")
    assert is_meaningful_quote("Aspirin reduced fever in adults.")
