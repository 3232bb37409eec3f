"""``bench_audit``: the seeded report generator, the import it goes through, the scoring."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command

from research.bench import audit
from research.bench.scifact import load_claims, load_corpus
from research.pipeline.audit import parse_report
from research.pipeline.verify import VerifyConfig
from research.pipeline.verify.aggregate import AggregateConfig
from research.pipeline.verify.records import Vote

AGENTS = [f"Agent {n}" for n in range(1, 25)]
EFFECTS = ["fever", "cholesterol", "glucose", "infections", "insulin resistance", "alertness"]


def write_corpus(directory: Path) -> None:
    """A SciFact-format fixture: per agent an abstract that states its finding verbatim, a
    supported claim and a contradicted one."""
    corpus, claims = [], []
    for i, agent in enumerate(AGENTS):
        effect = EFFECTS[i % len(EFFECTS)]
        doc = 100 + i
        corpus.append(
            {
                "doc_id": doc,
                "title": f"Effects of {agent} on {effect}",
                "abstract": [
                    f"We studied {agent} in a randomized trial of adults.",
                    f"{agent} reduces {effect}.",
                    "Adverse events were rare and mild.",
                ],
            }
        )
        claims += [
            {
                "id": 10 * i,
                "claim": f"{agent} reduces {effect}.",
                "evidence": {str(doc): [{"sentences": [1], "label": "SUPPORT"}]},
                "cited_doc_ids": [doc],
            },
            {
                "id": 10 * i + 1,
                "claim": f"{agent} does not reduce {effect}",  # no final period, as in the data
                "evidence": {str(doc): [{"sentences": [1], "label": "CONTRADICT"}]},
                "cited_doc_ids": [doc],
            },
        ]
    (directory / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in corpus) + "\n")
    (directory / "claims_train.jsonl").write_text("\n".join(json.dumps(c) for c in claims) + "\n")


@pytest.fixture
def data(tmp_path):
    write_corpus(tmp_path)
    return load_claims(tmp_path, "train"), load_corpus(tmp_path)


class Reader:
    """A fake verifier family that reads like a perfect one on the fixture: it supports a
    claim its passage states word for word, contradicts the negation of one, and abstains
    otherwise."""

    name = family = "reader"

    def judge(self, claim, items):
        votes = []
        for item in items:
            sentences = [item.text[a:b] for a, b in item.sentences]
            negated = claim.text.replace(" does not reduce ", " reduces ")
            if claim.text in sentences:
                verdict, quote = "supports", claim.text
            elif negated != claim.text and negated in sentences:
                verdict, quote = "contradicts", negated
            else:
                continue
            votes.append(
                Vote.bind(
                    self.name, self.family, claim, item, verdict=verdict, score=0.9, quote=quote
                )
            )
        return votes


class Abstainer:
    """A family that never decides: every sentence the check reads ends insufficient."""

    name = family = "abstainer"

    def judge(self, claim, items):
        return []


def config(verifier):
    return VerifyConfig(verifiers=(verifier,), aggregate=AggregateConfig(quorum=1))


def test_the_generator_is_deterministic_for_a_seed(data):
    claims, docs = data
    first = audit.generate(claims, docs, seed=7, reports=2, per_report=10)
    again = audit.generate(claims, docs, seed=7, reports=2, per_report=10)
    other = audit.generate(claims, docs, seed=8, reports=2, per_report=10)
    assert [r.markdown for r in first] == [r.markdown for r in again]
    assert [r.claims for r in first] == [r.claims for r in again]
    assert [r.markdown for r in first] != [r.markdown for r in other]


def test_it_produces_the_proportions_asked(data):
    claims, docs = data
    reports = audit.generate(claims, docs, seed=1, reports=2, per_report=10)
    counts = Counter(c.fault for r in reports for c in r.claims)
    assert counts == {
        "correct": 10,
        "wrong-citation": 2,
        "contradicted": 2,
        "invented-url": 2,
        "overstated": 2,
        "uncited": 2,
    }
    assert all(len(r.claims) == 10 for r in reports)
    shares = dict.fromkeys(audit.FAULTS, 0.0) | {"correct": 0.6, "invented-url": 0.4}
    reports = audit.generate(claims, docs, seed=1, reports=1, per_report=5, shares=shares)
    assert Counter(c.fault for c in reports[0].claims) == {"correct": 3, "invented-url": 2}
    # Largest remainders: 3.5 correct and 0.7 of each fault make 3 and four 1s.
    assert audit.allocate(7, audit.DEFAULT_SHARES) == {
        "correct": 3,
        "wrong-citation": 1,
        "contradicted": 1,
        "invented-url": 1,
        "overstated": 1,
        "uncited": 0,
    }
    with pytest.raises(ValueError, match="available"):
        audit.generate(claims, docs, seed=1, reports=3, per_report=10)


def test_each_fault_is_what_it_says(data):
    claims, docs = data
    by_id = {c.claim_id: c for c in claims}
    reports = audit.generate(claims, docs, seed=3, reports=2, per_report=10)
    used = [c.claim_id for r in reports for c in r.claims]
    assert len(used) == len(set(used))  # each source claim once
    for report in reports:
        for planned in report.claims:
            source = by_id[planned.claim_id]
            body = source.text.rstrip(".")
            if planned.fault == "contradicted":
                assert source.label == "CONTRADICT"
                assert source.doc_labels[planned.cited] == "CONTRADICT"
            else:
                assert source.label == "SUPPORT"
                assert source.doc_labels[planned.gold] == "SUPPORT"
            if planned.fault in ("correct", "contradicted"):
                assert (planned.cited, planned.text) == (planned.gold, body + ".")
            elif planned.fault == "wrong-citation":
                assert planned.cited in docs and planned.cited not in source.cited_doc_ids
                assert planned.text == body + "."
            elif planned.fault == "invented-url":
                assert planned.cited not in docs and planned.url.endswith(f"/doc/{planned.cited}")
            elif planned.fault == "overstated":
                assert planned.text == f"{body} in every case." != body + "."
                assert planned.cited == planned.gold
            else:
                assert planned.cited is None
                assert planned.text in report.markdown
                assert f"{body} [" not in report.markdown
            if planned.cited is not None:
                assert f"{planned.text[:-1]} [" in report.markdown
                assert f": {planned.url}\n" in report.markdown


def test_overstating_removes_a_hedge_or_adds_a_universal_quantifier():
    assert audit.overstate("Statins may reduce mortality") == "Statins will always reduce mortality"
    assert audit.overstate("Exercise can lower blood pressure in adults") == (
        "Exercise will always lower blood pressure in adults"
    )
    assert audit.overstate("Aspirin reduces fever") == "Aspirin reduces fever in every case"
    # "can not" is no hedge to strengthen, and "May" (a month, a name) is left alone.
    assert audit.overstate("Drug X can not cross the barrier") == (
        "Drug X can not cross the barrier in every case"
    )
    assert audit.overstate("Trials in May reported fewer cases") == (
        "Trials in May reported fewer cases in every case"
    )


def test_the_parser_recovers_every_generated_sentence_with_its_citation(data):
    claims, docs = data
    for report in audit.generate(claims, docs, seed=5, reports=2, per_report=10):
        parsed = parse_report(report.markdown, filename="report.md")
        assert parsed.format == "markdown" and not parsed.findings
        found = audit.align(report, parsed)
        for planned, sentence in zip(report.claims, found, strict=True):
            assert sentence is not None, planned.text
            assert [c.url for c in sentence.citations] == ([planned.url] if planned.url else [])
            assert not sentence.unresolved


def test_a_perfect_reader_catches_every_fault_and_keeps_every_correct_claim(data):
    claims, docs = data
    reports = audit.generate(claims, docs, seed=2, reports=2, per_report=10)
    bench = audit.run_bench(reports, docs, claims, config(Reader()))
    figures = audit.score(bench.results)
    faults = figures["faults"]
    assert figures["parse"] == {"sentences": 20, "recovered": 20, "lost": 0, "citation_mismatch": 0}
    assert faults["correct"]["outcomes"]["supports"] == 10
    assert (figures["false_flag_rate"], figures["coverage_kept"]) == (0.0, 1.0)
    for fault in audit.FAULTS[1:]:
        assert faults[fault]["caught_rate"] == 1.0 == faults[fault]["exact_rate"], fault
        assert faults[fault]["margin"] == 1.0
    for fault in audit.PAIRED:  # every faithful sentence confirmed, every faulty one caught
        assert faults[fault]["detected"] == faults[fault]["of"] == 2
    invented = next(r for r in bench.results if r.fault == "invented-url")
    assert re.search(
        r"https://corpus\.invalid/doc/\d+ could not be fetched: HTTP 404", invented.reason
    )


def test_flagging_everything_is_no_win(data):
    """An abstaining check catches every fault and keeps nothing: its margin is 0."""
    claims, docs = data
    reports = audit.generate(claims, docs, seed=2, reports=2, per_report=10)
    figures = audit.score(audit.run_bench(reports, docs, claims, config(Abstainer())).results)
    assert (figures["false_flag_rate"], figures["coverage_kept"]) == (1.0, 0.0)
    assert figures["caught_rate_all_faults"] == 1.0
    assert {figures["faults"][f]["margin"] for f in audit.FAULTS[1:]} == {0.0}
    assert figures["faults"]["contradicted"]["exact_rate"] == 0.0  # insufficient, not contradicts
    assert {figures["faults"][f]["of"] for f in audit.PAIRED} == {0}  # nothing to detect against


def result(fault, outcome, recovered=True, control=""):
    return audit.ClaimResult(fault, 1, 0, "A claim.", outcome, recovered, control=control)


def test_scoring_counts_a_hand_made_case():
    results = [
        result("correct", "supports"),
        result("correct", "supports"),
        result("correct", "contradicts"),
        result("correct", "lost", recovered=False),  # lost by the parser: not kept
        result("contradicted", "contradicts"),
        result("contradicted", "insufficient"),
        result("contradicted", "supports"),
        result("contradicted", "lost", recovered=False),  # lost: not caught either
        result("invented-url", "unverifiable"),
        result("uncited", "supports", recovered=False),  # parsed with a citation it lacks
        result("overstated", "insufficient", control="supports"),  # detected
        result("overstated", "supports", control="supports"),  # missed
        result("overstated", "insufficient", control="insufficient"),  # caught, not detected
    ]
    figures = audit.score(results)
    correct, contradicted = figures["faults"]["correct"], figures["faults"]["contradicted"]
    assert correct["claims"] == 4
    assert (correct["false_flag_rate"], correct["coverage_kept"]) == (0.5, 0.5)
    assert correct["false_contradiction_rate"] == 0.25
    assert (contradicted["caught"], contradicted["caught_rate"]) == (2, 0.5)
    assert (contradicted["exact"], contradicted["exact_rate"]) == (1, 0.25)
    assert contradicted["margin"] == 0.0
    assert figures["faults"]["invented-url"]["exact_rate"] == 1.0
    assert figures["faults"]["uncited"]["caught_rate"] == 0.0
    overstated = figures["faults"]["overstated"]
    assert (overstated["caught"], overstated["detected"], overstated["of"]) == (2, 1, 2)
    assert figures["faults"]["wrong-citation"]["claims"] == 0
    assert figures["caught_rate_all_faults"] == round(5 / 9, 4)
    assert figures["parse"] == {"sentences": 13, "recovered": 10, "lost": 2, "citation_mismatch": 1}
    lines = audit.table(figures)
    # Without correct claims there is no false-flag rate, coverage or margin: never a 0.
    alone = audit.score([r for r in results if r.fault != "correct"])
    assert (alone["false_flag_rate"], alone["coverage_kept"]) == (None, None)
    assert alone["faults"]["contradicted"]["margin"] is None
    empty = "| correct | 0 | 0 | 0 | 0 | 0 | 0 | 0 | false flag n/a; kept n/a | - | supports |"
    assert audit.table(alone)[2] == empty + " 0 (n/a) |"
    assert figures["faults"]["wrong-citation"]["caught_rate"] is None
    assert "| 2 (0.500) | n/a |" in audit.table(alone)[4]
    assert lines[0].startswith("| fault | claims | supports |")
    assert "| correct | 4 | 2 | 1 | 0 | 0 | 0 | 1 | false flag 0.500; kept 0.500 | - |" in lines[2]
    assert "| 2 (0.667); 1 of 2 confirmed when faithful | +0.167 |" in lines[6]


class FakeEncoder:
    label = "fake"

    def encode(self, texts):
        return np.zeros((len(texts), 384), dtype=np.float32)


def test_the_command_prints_the_table_and_writes_the_json(data, tmp_path, monkeypatch):
    import research.pipeline.verify as verify

    monkeypatch.setattr(verify, "verify_encoder", FakeEncoder)
    monkeypatch.setattr(verify, "default_config", lambda encode, out_of_fold: config(Reader()))
    out = io.StringIO()
    call_command(
        "bench_audit",
        scifact=tmp_path,
        seed=4,
        reports=2,
        claims_per_report=10,
        json=tmp_path / "audit.json",
        write_reports=tmp_path / "reports",
        stdout=out,
        stderr=io.StringIO(),
    )
    text = out.getvalue()
    assert "| wrong-citation | 2 |" in text
    assert "parse: 20 of 20 sentences recovered with their citation" in text
    assert "false_flag_rate: 0.0" in text and "coverage_kept: 1.0" in text
    assert "seed: 4" in text and "seconds:" in text and "machine:" in text
    payload = json.loads((tmp_path / "audit.json").read_text())
    assert payload["seed"] == 4 and payload["out_of_fold"] is True
    assert payload["machine"]["cpus"] >= 1 and len(payload["details"]) == 20
    assert len(list((tmp_path / "reports").glob("report-*.md"))) == 2
