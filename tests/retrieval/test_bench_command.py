"""bench_retrieval prints the contract's keys for every mode, through the real ingest and
retrieval path, and reuses what is already ingested."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from ledger.models import Passage, Source

pytestmark = pytest.mark.django_db

DOCS = [
    ("d1", "Aspirin and stroke", "Low-dose aspirin reduces the risk of ischaemic stroke."),
    ("d2", "Statins", "Statins lower LDL cholesterol in adults with diabetes."),
    ("d3", "Animal behaviour", "Felines slumber for most of the daytime."),
    ("d4", "TP53 variants", "The TP53-R175H allele is a structural hotspot mutation."),
]
QUERIES = [
    ("q1", "aspirin prevents stroke", "d1"),
    ("q2", "cats nap a lot", "d3"),
    ("q3", "TP53-R175H", "d4"),
]


@pytest.fixture
def beir(tmp_path):
    folder = tmp_path / "mini-beir"
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w") as out:
        for doc_id, title, text in DOCS:
            out.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    with (folder / "queries.jsonl").open("w") as out:
        for qid, text, _ in QUERIES:
            out.write(json.dumps({"_id": qid, "text": text, "metadata": {"gold": "never read"}}))
            out.write("\n")
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t1" for q, _, d in QUERIES]
    (folder / "qrels" / "test.tsv").write_bytes(("\r\n".join(lines) + "\r\n").encode())
    return folder


def run(beir, tmp_path, mode="all"):
    out, err = StringIO(), StringIO()
    report = tmp_path / "out.json"
    call_command(
        "bench_retrieval", beir=beir, split="test", mode=mode, json=report, stdout=out, stderr=err
    )
    lines = dict(line.split(": ", 1) for line in out.getvalue().splitlines())
    return lines, json.loads(report.read_text()), err.getvalue()


def test_it_prints_every_mode_side_by_side(beir, tmp_path):
    lines, payload, err = run(beir, tmp_path)
    for mode in ("bm25", "dense", "hybrid"):
        for key in ("ndcg@10", "recall@100", "mrr@10", "latency_p50_ms", "latency_p95_ms"):
            assert float(lines[f"{mode}.{key}"]) >= 0
    for key in ("ndcg@10", "recall@100", "mrr@10", "latency_p50_ms", "latency_p95_ms"):
        assert key in lines and key in payload
    assert float(lines["hybrid.recall@100"]) == 1.0  # every gold doc is within 100 of 4
    assert float(lines["hybrid.mrr@10"]) == 1.0  # the three queries answered first
    assert float(lines["bm25.mrr@10"]) < 1.0  # "cats nap a lot" shares no word
    assert payload["modes"]["hybrid"]["ndcg@10"] == float(lines["hybrid.ndcg@10"])
    assert "reranker: none" in err


def test_it_reuses_an_ingested_corpus(beir, tmp_path):
    run(beir, tmp_path, mode="bm25")
    passages = Passage.objects.count()
    _, _, err = run(beir, tmp_path, mode="bm25")
    assert "4 already ingested" in err
    assert Passage.objects.count() == passages
    assert Source.objects.filter(metadata__corpus="mini").count() == 4


def test_it_records_reranker_none_in_the_default_mode(beir, tmp_path):
    lines, payload, _ = run(beir, tmp_path, mode="hybrid+rerank")
    assert lines["reranker_loaded"] == "0"
    assert payload["notes"]["hybrid+rerank"]["reranker"] == "none"


def test_it_measures_latency_at_growing_sizes_and_cleans_up(beir, tmp_path):
    from ledger.models import Library, SparseBlock, SparseGone, SparseStats

    out, earlier = StringIO(), tmp_path / "earlier.json"
    earlier.write_text(json.dumps({"sizes": [10], "size_10.bm25.latency_p50_ms": 1.0}))
    call_command(
        "bench_retrieval_scale",
        beir=beir,
        sizes="30,60",
        queries=2,
        merge=[earlier],
        json=tmp_path / "scale.json",
        plot=tmp_path / "scale.svg",
        stdout=out,
        stderr=StringIO(),
    )
    lines = dict(line.split(": ", 1) for line in out.getvalue().splitlines())
    for size in (30, 60):
        for mode in ("hybrid", "bm25", "dense"):
            assert float(lines[f"size_{size}.{mode}.latency_p95_ms"]) > 0
            assert float(lines[f"size_{size}.{mode}.cpu_ms_mean"]) > 0
    assert not Library.objects.filter(name="scratch:scale").exists()
    assert not Source.objects.filter(canonical_id__startswith="scratch:").exists()
    assert sum(SparseStats.objects.values_list("documents", flat=True)) == 0
    assert not SparseBlock.objects.exists() and not SparseGone.objects.exists()
    payload = json.loads((tmp_path / "scale.json").read_text())
    assert payload["sizes"] == [10, 30, 60] and "size_10.bm25.latency_p50_ms" in payload
    svg = (tmp_path / "scale.svg").read_text()
    assert all(f">{size}</text>" in svg for size in (10, 30, 60))
