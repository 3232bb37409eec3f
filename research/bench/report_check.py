"""Figures for the semantic check of reports (``manage.py bench_report_check``).

1. The bar: the shipped entailment model's calls on the NLI pairs held back from its
   training (``research.bench.nli_recipe``: the same seeded sample), at each entailment
   probability: how many pairs it calls entailed, how many of those are (precision), and
   how many entailed pairs it finds (recall). The default ``REPORT_CHECK_ENTAILMENT`` is
   the lowest bar in the grid whose precision reaches ``TARGET_PRECISION``.
2. Report sentences (``--sentences FILE``, JSON lines of ``{field, kind, expect,
   claims, sentence}``): each sentence checked against its claims as a report sentence
   citing them is (``research.pipeline.report_check``); passes and refusals per kind.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from research.pipeline.report_check import EntailmentScorer, Hypothesis, Premise, check_sentences
from research.pipeline.verify.nli import ENTAILMENT

GRID = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
TARGET_PRECISION = 0.9
ENTAILED_LABEL = 1  # the data's label id for entailment (nli_training.LABELS)


def bar_table(nli_dir: Path, scorer: EntailmentScorer) -> dict[str, Any]:
    from research.bench import nli_training as nt
    from research.bench.nli_recipe import HELD_BACK, SHUFFLE_SEED

    mix = nli_dir / "pairs" / "mix.jsonl"
    if not mix.is_file():
        raise ValueError(f"{mix} does not exist (give --nli the shared/data/nli folder)")
    pairs = list(nt.load_pairs(mix))
    random.Random(SHUFFLE_SEED).shuffle(pairs)
    held = pairs[:HELD_BACK]
    probs = scorer.probs([(p.premise, p.hypothesis) for p in held])
    gold = np.asarray([p.label == ENTAILED_LABEL for p in held])
    top = probs.argmax(axis=1) == ENTAILMENT
    rows = []
    for bar in GRID:
        called = top & (probs[:, ENTAILMENT] >= bar)
        right = int((called & gold).sum())
        rows.append(
            {
                "bar": bar,
                "called": int(called.sum()),
                "precision": round(right / max(int(called.sum()), 1), 3),
                "recall": round(right / max(int(gold.sum()), 1), 3),
            }
        )
    chosen = next((r["bar"] for r in rows if r["precision"] >= TARGET_PRECISION), None)
    return {"pairs": len(held), "entailed": int(gold.sum()), "rows": rows, "chosen": chosen}


def read_sentences(path: Path) -> list[dict[str, Any]]:
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not (item["claims"] and item["sentence"] and item["expect"] in ("pass", "refuse")):
                raise ValueError("needs claims, a sentence and expect pass or refuse")
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: {exc}") from exc
        items.append(item)
    return items


def sentence_table(
    items: Sequence[dict[str, Any]], scorer: EntailmentScorer, bar: float
) -> dict[str, Any]:
    hypotheses = [
        Hypothesis(
            str(item.get("field", "")),
            item["sentence"],
            tuple(Premise(f"C{n}", text) for n, text in enumerate(item["claims"], 1)),
        )
        for item in items
    ]
    checked = check_sentences(hypotheses, scorer, bar)
    kinds: dict[str, Counter[str]] = {}
    rows = []
    for item, result in zip(items, checked.sentences, strict=True):
        got = "pass" if result.passed else "refuse"
        lexical = "refuse" if _lexical_problems(item) else "pass"
        kinds.setdefault(item.get("kind", ""), Counter())[
            "right" if got == item["expect"] else "wrong"
        ] += 1
        rows.append(
            {
                "field": item.get("field", ""),
                "kind": item.get("kind", ""),
                "expect": item["expect"],
                "got": got,
                "lexical": lexical,
                "both": "pass" if got == lexical == "pass" else "refuse",
                "entailment": round(result.entailment, 3),
                "sentence": item["sentence"],
            }
        )

    def share(expect: str, column: str = "got") -> float:
        chosen = [r for r in rows if r["expect"] == expect]
        kept = sum(1 for r in chosen if r[column] == expect)
        return round(kept / max(len(chosen), 1), 3)

    return {
        "bar": bar,
        "sentences": len(rows),
        "supported_kept": share("pass"),
        "unsupported_refused": share("refuse"),
        # the synthesis runs the lexical check on LLM prose first, then this one
        "lexical": {
            "supported_kept": share("pass", "lexical"),
            "unsupported_refused": share("refuse", "lexical"),
        },  # fmt: skip
        "both": {
            "supported_kept": share("pass", "both"),
            "unsupported_refused": share("refuse", "both"),
        },  # fmt: skip
        "per_kind": {kind: dict(counts) for kind, counts in sorted(kinds.items())},
        "rows": rows,
    }


def _lexical_problems(item: dict[str, Any]) -> list[str]:
    """What the synthesis's lexical check (``synthesize.check_sentence``) finds wrong."""
    from research.pipeline.synthesize import Capsule, check_sentence

    by_label = {
        f"C{n}": Capsule(code=f"C{n}", text=text, fingerprint=f"C{n}")
        for n, text in enumerate(item["claims"], 1)
    }
    return check_sentence(item["sentence"], list(by_label), by_label)
