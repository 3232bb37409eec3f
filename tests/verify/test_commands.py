from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command

from research.bench.scifact import grouped_folds, load_claims
from research.pipeline.verify.learned import VerifierWeights

KEYS = (
    "accuracy",
    "macro_f1",
    "f1_support",
    "f1_contradict",
    "f1_nei",
    "escape_rate",
    "claims_per_min",
)
TOPICS = ["aspirin", "statins", "metformin", "vitamin D", "exercise", "caffeine"]
EFFECTS = ["fever", "cholesterol", "glucose", "infections", "insulin resistance", "alertness"]


def write_scifact(directory):
    """A small SciFact-format dataset: per topic a supported, a contradicted and an NEI claim."""
    corpus, claims = [], []
    for i, (topic, effect) in enumerate(zip(TOPICS, EFFECTS, strict=True)):
        corpus.append(
            {
                "doc_id": 100 + i,
                "title": f"Effects of {topic} on {effect}",
                "abstract": [
                    f"We studied {topic} in a randomized trial of adults.",
                    f"Treatment with {topic} significantly reduced {effect} compared with placebo.",
                    "Adverse events were rare and mild.",
                ],
                "structured": False,
            }
        )
        doc = str(100 + i)
        claims += [
            {
                "id": 10 * i,
                "claim": f"{topic.capitalize()} reduces {effect}.",
                "evidence": {doc: [{"sentences": [1], "label": "SUPPORT"}]},
                "cited_doc_ids": [100 + i],
            },
            {
                "id": 10 * i + 1,
                "claim": f"{topic.capitalize()} does not reduce {effect}.",
                "evidence": {doc: [{"sentences": [1], "label": "CONTRADICT"}]},
                "cited_doc_ids": [100 + i],
            },
            {
                "id": 10 * i + 2,
                "claim": f"{topic.capitalize()} is cheaper than surgery.",
                "evidence": {},
                "cited_doc_ids": [100 + i],
            },
        ]
    (directory / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in corpus) + "\n")
    (directory / "claims_train.jsonl").write_text("\n".join(json.dumps(c) for c in claims) + "\n")


def figures(text):
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^(\w+): ([-\d.e]+)$", text, re.M)}


def test_it_groups_folds_by_cited_abstract(tmp_path):
    write_scifact(tmp_path)
    claims = load_claims(tmp_path, "train")
    folds = grouped_folds(claims, k=3)
    for claim in claims:
        sharing = [c for c in claims if set(c.cited_doc_ids) & set(claim.cited_doc_ids)]
        assert {folds[c.claim_id] for c in sharing} == {folds[claim.claim_id]}
    assert set(folds.values()) == {0, 1, 2}


@pytest.mark.slow
def test_it_trains_reproducibly_and_benchmarks_with_the_contract_keys(tmp_path):
    write_scifact(tmp_path)
    outputs = []
    for name in ("a.json", "b.json"):
        out = io.StringIO()
        call_command(
            "train_verifier",
            scifact=tmp_path,
            out=tmp_path / name,
            folds=3,
            stdout=out,
            stderr=io.StringIO(),
        )
        outputs.append(out.getvalue())
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
    trained = figures(outputs[0])
    assert {
        "cv_macro_f1",
        "cv_escape_rate",
        "claim_only_macro_f1",
        "always_support_macro_f1",
    } <= set(trained)
    weights = VerifierWeights.load(tmp_path / "a.json")
    assert len(weights.folds) == 3 and len(weights.claim_folds) == 18

    out = io.StringIO()
    call_command(
        "bench_verification",
        scifact=tmp_path,
        split="train",
        oracle=True,
        ablation=True,
        json=tmp_path / "bench.json",
        stdout=out,
        stderr=io.StringIO(),
    )
    got = figures(out.getvalue())
    # One ablation row per hand predicate, the rules checks and align's veto included.
    assert "without rules direction | " in out.getvalue()
    assert "without align.support_vetoed | " in out.getvalue()
    assert set(KEYS) <= set(got)
    assert 0.0 <= got["macro_f1"] <= 1.0 and got["claims_per_min"] > 0
    detail = json.loads((tmp_path / "bench.json").read_text())
    assert detail["out_of_fold"] is True and len(detail["details"]) == 18
    # The figures say which families judged them (and which did not run, and why).
    assert "align (counted)" in out.getvalue() and "learned (counted)" in out.getvalue()
    assert "rules (check)" in out.getvalue()
    assert detail["families"]["nli"].startswith("not configured") and detail["quorum"] == 2


def test_it_refuses_a_split_the_data_does_not_have(tmp_path):
    write_scifact(tmp_path)
    with pytest.raises(CommandError, match="claims_dev.jsonl"):
        call_command("bench_verification", scifact=tmp_path, split="dev", oracle=True)


def test_it_scores_the_out_of_domain_claims_against_their_own_articles(tmp_path):
    # Open retrieval would search a SciFact library for claims about central banks: the
    # fixture articles are in no library, so --out-of-domain is always oracle.
    out = io.StringIO()
    call_command(
        "bench_verification",
        out_of_domain=True,
        json=tmp_path / "ood.json",
        stdout=out,
        stderr=io.StringIO(),
    )
    detail = json.loads((tmp_path / "ood.json").read_text())
    assert detail["oracle"] is True and detail["split"] == "dev"
    assert detail["claims"] == 76
    assert all(d["evidence"] >= 1 for d in detail["details"])
