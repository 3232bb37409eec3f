"""Question → research plan: subquestions across dimensions, each with typed queries.

Two planners share one schema (:mod:`research.pipeline.records`):

* :func:`offline_plan` — deterministic, no model: it reads the question's shape (an
  effect question "Does X reduce Y in Z?", read by :mod:`research.pipeline.effect` as
  outcome-aware relevance reads it; a comparison, a definition, a how-question or a bare
  topic) and seeds one subquestion per research dimension, each with queries
  of the DESIGN.md classes, counter-evidence always among them.
* :func:`llm_plan` — an OpenAI-compatible model proposes; its reply is validated
  against the same schema, and anything invalid falls back to the offline plan with
  the reason in ``planner_message``. It never raises for a bad reply.

:func:`followup_queries` makes the targeted queries of best-first expansion.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from research.pipeline.effect import base_verb, parse_effect
from research.pipeline.language.direction import EFFECT_VERB_OPPOSITES
from research.pipeline.language.effects import ASSOCIATIONS, NOMINAL_VERBS
from research.pipeline.language.lexicon import (
    AUXILIARIES,
    COPULAS,
    DIMENSION_TERMS,
    FIELD_CUES,
    QUESTION_OPENERS,
    QUESTION_STOPWORDS,
    QUESTION_TOKEN,
    TAIL_PREPOSITIONS,
)
from research.pipeline.language.sentences import coordinated_items, question_clauses
from research.pipeline.records import (
    DEFAULT_SOURCE_CLASSES,
    QUERY_CLASSES,
    SOURCE_CLASSES,
    Budgets,
    PlanContent,
    PlanSchemaError,
    QuerySpec,
    SubquestionSpec,
    normalize_query,
    parse_plan,
    question_problems,
)

if TYPE_CHECKING:
    from research.providers.llm import LLMClient

OFFLINE_PLANNER = "offline-rules-v1"


# Which source classes suit each query class (a query may narrow the plan's classes).
CLASS_SOURCES: dict[str, list[str]] = {
    "definition": ["library", "encyclopedia", "paper", "documentation"],
    "mechanism": ["library", "paper", "preprint"],
    "provenance": ["library", "paper", "preprint"],
    "benchmark": ["library", "paper", "preprint"],
    "implementation": ["library", "documentation", "paper", "web"],
    "limitation": ["library", "paper", "preprint", "web"],
    "comparison": ["library", "paper", "preprint"],
    "counter-evidence": ["library", "paper", "preprint", "news", "web"],
    "temporal": ["library", "paper", "news", "web"],
    "source-specific": ["library", "paper", "documentation"],
}


@dataclass(frozen=True)
class QuestionShape:
    """What the offline planner understood of a question."""

    kind: str  # effect | compound | comparison | definition | how | topic
    question: str
    topic: str  # content words of the whole question
    subject: str = ""  # X (intervention, method, thing)
    verb: str = ""  # reduce / improve / … as written, lower case ("on" for "effect of X on Y")
    outcome: str = ""  # Y
    population: str = ""  # Z
    other: str = ""  # the second side of a comparison; what X is compared with in an effect
    plural: bool = False  # X takes a plural verb ("Do carbon taxes reduce …")
    parts: tuple[Part, ...] = ()  # a compound question's parts, one subquestion each


@dataclass(frozen=True)
class Part:
    """One part of a compound question: its own question, and the words naming its aspect
    ("cost single-threaded performance"; "compatibility limitations C extension modules")."""

    text: str
    aspect: str


@dataclass(frozen=True)
class Register:
    """The research vocabulary of a field: what a study, a harm, a variant and a baseline
    are called there. The effect plan's evidence, limitation, implementation, comparison,
    temporal and provenance queries are worded in it, so a question about carbon taxes is
    not searched for "dose regimen" and "versus placebo"."""

    name: str
    design: str  # the primary evidence design ("randomized controlled trial")
    harms: str  # what a limitation query adds ("limitations adverse effects")
    variants_question: str  # "Which doses, forms or regimens of {x} were studied?"
    variants: str  # the implementation query's words ("dose regimen")
    baseline: str  # "placebo"
    combined: str  # "other treatments"
    recent: str  # "recent trials"
    lasting: str  # "long-term follow-up"
    origin: str  # "original study cohort"
    results: str  # a follow-up query's evidence words ("trial results")
    # How a report names the evidence that would close a gap (reports.exports.answer):
    studies: str  # "trials"
    designs: str  # "randomized controlled trials"
    variant_nouns: str  # "the doses, forms and schedules"
    compared_with: str  # "placebo, alternatives or combinations"
    origins: str  # "trials or cohorts"


REGISTERS = {
    "clinical": Register(
        "clinical",
        design="randomized controlled trial",
        harms="limitations adverse effects",
        variants_question="Which doses, forms or regimens of {x} were studied?",
        variants="dose regimen",
        baseline="placebo",
        combined="other treatments",
        recent="recent trials",
        lasting="long-term follow-up",
        origin="original study cohort",
        results="trial results",
        studies="trials",
        designs="randomized controlled trials",
        variant_nouns="the doses, forms and schedules",
        compared_with="placebo, alternatives or combinations",
        origins="trials or cohorts",
    ),
    "policy": Register(
        "policy",
        design="empirical study natural experiment",
        harms="limitations unintended consequences",
        variants_question="Which designs, levels or variants of {x} were studied?",
        variants="design level",
        baseline="alternative policies",
        combined="other measures",
        recent="recent studies",
        lasting="long-run effects",
        origin="original study data",
        results="empirical results",
        studies="studies",
        designs="empirical studies or natural experiments",
        variant_nouns="the designs and levels",
        compared_with="alternative policies or combinations",
        origins="studies or data sets",
    ),
    "technical": Register(
        "technical",
        design="benchmark evaluation empirical study",
        harms="limitations trade-offs",
        variants_question="Which configurations, versions or settings of {x} were evaluated?",
        variants="configuration version",
        baseline="alternatives",
        combined="other techniques",
        recent="recent evaluations",
        lasting="production experience",
        origin="original paper benchmark",
        results="benchmark results",
        studies="evaluations",
        designs="benchmark evaluations or empirical studies",
        variant_nouns="the configurations and versions",
        compared_with="alternatives or combinations",
        origins="papers or benchmarks",
    ),
    "general": Register(
        "general",
        design="empirical study",
        harms="limitations drawbacks",
        variants_question="Which forms or variants of {x} were studied?",
        variants="forms variants",
        baseline="alternatives",
        combined="other approaches",
        recent="recent studies",
        lasting="long-term effects",
        origin="original study source",
        results="study results",
        studies="studies",
        designs="empirical studies",
        variant_nouns="the forms and variants",
        compared_with="alternatives or combinations",
        origins="studies or sources",
    ),
}


_QUESTION_WORD = QUESTION_TOKEN  # "enzyme", "open-source", "C++", "3.13"
# The most content terms a query takes from the question: a search engine given the whole
# question (issue 26.7: 15 and more keywords) matches almost nothing.
MAX_QUERY_TERMS = 8
CONTEXT_TERMS = 3  # of them, how many name the subject at least


def field_register(question: str) -> Register:
    """The question's research register: clinical, policy, technical, or general. A question
    goes to the field whose cue words (:data:`research.pipeline.language.lexicon.FIELD_CUES`,
    matched at a word's start) it holds most; none, or a tie, gives the neutral "general"
    register."""
    words = _QUESTION_WORD.findall(question.casefold())
    hits = {
        field: sum(any(w.startswith(cue) for cue in cues) for w in words)
        for field, cues in FIELD_CUES.items()
    }
    best = max(hits.values())
    leaders = [field for field, n in hits.items() if n == best]
    return REGISTERS[leaders[0] if best and len(leaders) == 1 else "general"]


def keywords(text: str) -> str:
    """Content words in order, without stopwords or duplicates."""
    words = _QUESTION_WORD.findall(text)
    kept = [w for w in words if w.casefold() not in QUESTION_STOPWORDS]
    return " ".join(dict.fromkeys(kept))


def clipped(terms: str, limit: int = MAX_QUERY_TERMS) -> str:
    """The first ``limit`` words of ``terms``."""
    return " ".join(terms.split()[:limit])


def bounded(context: str, aspect: str, extra: str = "", limit: int = MAX_QUERY_TERMS) -> str:
    """A query of at most ``limit`` of the question's terms, then the ``extra`` words of its
    class ("benchmark results"): the subject's last :data:`CONTEXT_TERMS` (a noun phrase's
    head comes last: "adding type hints to Django" keeps "type hints Django"), the
    ``aspect`` the subquestion asks about, and as many more subject terms as fit."""
    ctx, own = context.split(), aspect.split()
    own = own[: limit - min(CONTEXT_TERMS, len(ctx))]
    room = limit - len(own)
    kept = ctx[-room:] if room > 0 else []
    words: dict[str, str] = {}
    for word in [*kept, *own, *extra.split()]:
        words.setdefault(word.casefold(), word)
    return " ".join(words.values())


def _strip_question(question: str) -> str:
    return " ".join(question.split()).rstrip(" ?.!")


_PLURAL_AUX = frozenset(["do", "are", "were", "have"])
_SINGULAR_AUX = frozenset(["does", "is", "was", "has"])


def _is_plural(exposure: str, verb: str, aux: str) -> bool:
    """Whether X takes a plural verb: from the auxiliary ("Do X …", "Does X …"), a clause's
    own verb ("whether tariffs reduce"), else X's last word ("carbon taxes")."""
    if aux in _PLURAL_AUX or aux in _SINGULAR_AUX:
        return aux in _PLURAL_AUX
    if not aux and verb not in NOMINAL_VERBS and verb not in ASSOCIATIONS:
        return base_verb(verb) == verb
    last = exposure.split()[-1].lower() if exposure.split() else ""
    return last.endswith("s") and not last.endswith(("ss", "is", "us"))


def analyze_question(question: str) -> QuestionShape:
    """Recognize the question's shape; anything else is a topic. An effect question is read
    by :func:`research.pipeline.effect.parse_effect`, the grammar outcome-aware relevance
    reads it with ("Do minimum wage increases reduce teen employment?": X "minimum wage
    increases")."""
    q = _strip_question(question)
    topic = keywords(q) or q
    compound = _compound(q, topic, single=False)
    if compound is not None:
        return compound
    effect = parse_effect(q)
    if effect is not None:
        return QuestionShape(
            "effect",
            q,
            topic,
            effect.exposure,
            effect.verb,
            effect.outcome,
            effect.population,
            other=effect.comparator,
            plural=_is_plural(effect.exposure, effect.verb, effect.aux),
        )
    comparison = re.match(
        r"^(?:(?:what is|what's) the difference between|compare|how does)\s+(?P<a>.+?)\s+"
        r"(?:and|with|vs\.?|versus|compare to|compare with)\s+(?P<b>.+)$",
        q,
        re.IGNORECASE,
    ) or re.match(r"^(?P<a>.+?)\s+(?:vs\.?|versus)\s+(?P<b>.+)$", q, re.IGNORECASE)
    if comparison:
        return QuestionShape("comparison", q, topic, comparison["a"], other=comparison["b"])
    definition = re.match(r"^(?:what (?:is|are)|define|who (?:is|are))\s+(?P<x>.+)$", q, re.I)
    if definition:
        return QuestionShape("definition", q, topic, definition["x"])
    how = re.match(r"^how\s+(?:does|do|did|can|is|are)\s+(?P<x>.+?)(?:\s+work)?$", q, re.I)
    if how:
        return QuestionShape("how", q, topic, how["x"])
    return _compound(q, topic, single=True) or QuestionShape("topic", q, topic, q)


def _compound(q: str, topic: str, *, single: bool) -> QuestionShape | None:
    """A question of coordinated parts: two or more questions ("…, and what … remain for
    Z"), or (``single``) one wh-question whose last phrase coordinates ("cost in A and B").

    1. Each clause gives one part per item of its last phrase, the phrase after its last
       preposition: "What does X cost in A and B" -> "What does X cost in A?", "… in B?".
    2. The subject is what the first clause that names one asks about (:func:`_subject`),
       else the first clause's content words.
    3. A part's aspect is its words less the subject's: "cost single-threaded performance".
    """
    clauses = question_clauses(q)
    if len(clauses) < 2 and not (single and _opener(q.split())):
        return None
    texts = [pair for clause in clauses for pair in _clause_texts(clause)]
    if len(texts) < 2:
        return None
    subject = next((x for clause in clauses if (x := _subject(clause))), "")
    known = {w.casefold() for w in keywords(subject).split()}
    parts = tuple(
        Part(text, " ".join(w for w in keywords(named).split() if w.casefold() not in known))
        for text, named in texts
    )
    subject = subject or clipped(keywords(clauses[0]), MAX_QUERY_TERMS - 3) or q
    return QuestionShape("compound", q, topic, subject, parts=parts)


def _clause_texts(clause: str) -> list[tuple[str, str]]:
    """The clause as one question per item of its last phrase (itself when it has none),
    each with the words that name its aspect: all of them, less the verb of a clause whose
    wh-word takes a noun ("what limitations remain for Z": the limitations are asked about,
    "remain" is not; "what does X cost in A": "cost" is). An effect clause without such a
    phrase gives one question per item of its outcome ("affect employment and prices")."""
    words = clause.split()
    at = _tail(words)
    items = coordinated_items(" ".join(words[at + 1 :])) if at else []
    if len(items) < 2:
        return _outcome_texts(clause)
    nominal = _opener(words) and not _auxiliary(words)
    head = words[: at - 1] + words[at : at + 1] if nominal else words[: at + 1]
    return [
        (_sentence(" ".join([*words[: at + 1], item])), " ".join([*head, item])) for item in items
    ]


def _outcome_texts(clause: str) -> list[tuple[str, str]]:
    words = clause.split()
    effect = parse_effect(clause)
    items = coordinated_items(effect.outcome) if effect and keywords(effect.exposure) else []
    if effect is None or len(items) < 2 or effect.outcome not in clause:
        nominal = _opener(words) and not _auxiliary(words) and _tail(words)
        named = words[: _tail(words) - 1] + words[_tail(words) :] if nominal else words
        return [(_sentence(clause), " ".join(named))]
    return [
        (
            _sentence(clause.replace(effect.outcome, item, 1)),
            f"{effect.verb} {item} {effect.population}",
        )
        for item in items
    ]


def _tail(words: list[str]) -> int:
    """Where the clause's last phrase starts: its last preposition (past the wh-word and
    its next word, before the last word); 0 when there is none."""
    return next(
        (i for i in range(len(words) - 2, 1, -1) if words[i].lower() in TAIL_PREPOSITIONS), 0
    )


def _opener(words: list[str]) -> bool:
    return bool(words) and words[0].lower() in QUESTION_OPENERS


def _auxiliary(words: list[str]) -> int:
    """Where the auxiliary after a wh-word is ("what does"; "how much do": the words between
    are stopwords); 0 if none, or if a noun comes between ("which countries have")."""
    for i, word in enumerate(words[1:4], start=1):
        if word.lower() in AUXILIARIES:
            return i
        if word.casefold() not in QUESTION_STOPWORDS:
            return 0
    return 0


def _subject(clause: str) -> str:
    """What a clause asks about: X of an effect clause ("How much do X reduce Y"), else the
    words after a wh-word's auxiliary: up to a coordinated last phrase ("What are X in A and
    B", "What does X cost in A and B", the verb left out), else to the end ("What does X
    cost", the verb left out; "What are X"). '' when a noun stands between the wh-word and
    its auxiliary ("which countries have …") or there is no auxiliary ("what limitations
    remain …")."""
    effect = parse_effect(clause)
    if effect is not None and keywords(effect.exposure):
        return effect.exposure
    words = clause.split()
    aux = _auxiliary(words) if _opener(words) else 0
    if not aux:
        return ""
    at = _tail(words)
    coordinated = at > aux and len(coordinated_items(" ".join(words[at + 1 :]))) > 1
    head = words[aux + 1 : at if coordinated else len(words)]
    return " ".join(head if words[aux].lower() in COPULAS else head[:-1])


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text[:1].upper() + text[1:] + "?"


def _q(text: str, query_class: str) -> tuple[str, str]:
    return " ".join(text.split()), query_class


def _effect_nodes(s: QuestionShape) -> list[tuple[str, str, int, list[tuple[str, str]]]]:
    x, y, z = keywords(s.subject) or s.subject, keywords(s.outcome) or s.outcome, s.population
    r = field_register(s.question)
    zk = keywords(z)
    verb = base_verb(s.verb)
    opposite = EFFECT_VERB_OPPOSITES.get(verb, "not affect")
    if verb in ASSOCIATIONS:
        verbs, negated = ("are " if s.plural else "is ") + verb, f"not {verb}"
    else:
        head, _, tail = verb.partition(" ")
        verbs = verb if s.plural else " ".join([head + "s", tail]).strip()
        negated = f"{'do' if s.plural else 'does'} not {verb}"
    base = f"{x} {y} {zk}".strip()
    return [
        (
            f"What do studies report about whether {s.subject} {verbs} {s.outcome}"
            + (f" in {z}" if z else "")
            + "?",
            "evidence",
            3,
            [
                _q(f"{x} {verb} {y} {zk}", "benchmark"),
                _q(f"{base} {r.design}", "benchmark"),
                _q(f"{base} meta-analysis systematic review", "source-specific"),
            ],
        ),
        (
            f"What evidence contradicts or qualifies the claim that {s.subject} {verbs} "
            f"{s.outcome}?",
            "counter-evidence",
            3,
            [
                _q(f"{x} {negated} {y}", "counter-evidence"),
                _q(f"{x} no effect on {y} {zk}", "counter-evidence"),
                _q(f"{x} {opposite} {y}", "counter-evidence"),
                _q(f"{x} {y} {r.harms}", "limitation"),
            ],
        ),
        (
            f"Through what mechanism could {s.subject} affect {s.outcome}?",
            "mechanism",
            2,
            [
                _q(f"{x} mechanism {y}", "mechanism"),
                _q(f"how {x} affects {y}", "mechanism"),
            ],
        ),
        (
            f"What exactly are {s.subject} and {s.outcome}"
            + (f", and who counts as {z}" if z else "")
            + "?",
            "definition",
            1,
            [_q(f"{x} definition", "definition"), _q(f"{y} {zk} definition", "definition")],
        ),
        (
            r.variants_question.format(x=s.subject),
            "implementation",
            1,
            [_q(f"{x} {r.variants} {y}", "implementation")],
        ),
        (
            f"How {'do' if s.plural else 'does'} {s.subject} compare with "
            + (
                f"{s.other} for {s.outcome}?"
                if s.other
                else f"alternatives or combinations for {s.outcome}?"
            ),
            "comparison",
            2 if s.other else 1,
            [
                _q(f"{x} versus {keywords(s.other) or r.baseline} {y}", "comparison"),
                _q(f"{x} combined with {r.combined} {y}", "comparison"),
            ],
        ),
        (
            f"Has the evidence on {s.subject} and {s.outcome} changed over time?",
            "temporal",
            1,
            [
                _q(f"{x} {y} {r.recent}", "temporal"),
                _q(f"{x} {y} {r.lasting}", "temporal"),
            ],
        ),
        (
            f"Where do the main findings on {s.subject} and {s.outcome} come from?",
            "provenance",
            1,
            [_q(f"{x} {y} {r.origin}", "provenance")],
        ),
    ]


def _generic_nodes(s: QuestionShape) -> list[tuple[str, str, int, list[tuple[str, str]]]]:
    t = clipped(keywords(s.subject) or s.topic, MAX_QUERY_TERMS - 3)  # room for class words
    other = keywords(s.other)
    subject = s.subject
    topical = s.kind in ("topic", "compound")  # a subject of any number, or no noun at all
    nodes: list[tuple[str, str, int, list[tuple[str, str]]]] = [
        (
            f"Which key terms of {subject} need defining, and how are they defined?"
            if topical
            else f"What is {subject}, and how is it defined?",
            "definition",
            2 if s.kind == "definition" else 1,
            [_q(f"{t} definition", "definition"), _q(f"what is {t}", "definition")],
        ),
        (
            f"Which mechanisms underlie {subject}?" if topical else f"How does {subject} work?",
            "mechanism",
            3 if s.kind == "how" else 2,
            [_q(f"{t} mechanism", "mechanism"), _q(f"how {t} works", "mechanism")],
        ),
        (
            f"What evidence and measurements exist about {subject}?",
            "evidence",
            3,
            [_q(f"{t} evidence", "benchmark"), _q(f"{t} evaluation results", "benchmark")],
        ),
        (
            f"What evidence contradicts or qualifies common claims about {subject}?",
            "counter-evidence",
            3,
            [
                _q(f"{t} criticism contradicting evidence", "counter-evidence"),
                _q(f"{t} failure no effect", "counter-evidence"),
                _q(f"{t} limitations", "limitation"),
            ],
        ),
        (
            f"What practical applications or interventions concern {subject}?"
            if topical
            else f"How is {subject} used in practice?",
            "implementation",
            1,
            [_q(f"{t} application practice", "implementation")],
        ),
        (
            f"How does {subject} compare with {s.other or 'alternatives'}?",
            "comparison",
            3 if s.kind == "comparison" else 1,
            [_q(f"{t} versus {other or 'alternatives'}", "comparison")]
            + ([_q(f"{other} compared with {t}", "comparison")] if other else []),
        ),
        (
            f"How has knowledge about {subject} changed over time?",
            "temporal",
            1,
            [_q(f"{t} recent developments", "temporal"), _q(f"{t} history", "temporal")],
        ),
        (
            f"What do primary sources say about {subject}?"
            if topical
            else f"Where was {subject} introduced, and what do primary sources say?",
            "provenance",
            1,
            [
                _q(f"{t} origin introduced", "provenance"),
                _q(f"{t} primary source", "source-specific"),
            ],
        ),
    ]
    return nodes


def _compound_nodes(s: QuestionShape) -> list[tuple[str, str, int, list[tuple[str, str]]]]:
    """One evidence subquestion per part, each searched for its own aspect within the
    subject, then the subject's other dimensions (its evidence is the parts')."""
    r = field_register(s.question)
    subject = keywords(s.subject) or s.topic
    parts = [
        (
            part.text,
            "evidence",
            3,
            [
                _q(bounded(subject, part.aspect), "benchmark"),
                _q(bounded(subject, part.aspect, r.results), "benchmark"),
                _q(bounded(subject, part.aspect, r.harms), "limitation"),
            ],
        )
        for part in s.parts
    ]
    return parts + [node for node in _generic_nodes(s) if node[1] != "evidence"]


def _build(
    shape: QuestionShape, nodes: list[tuple[str, str, int, list[tuple[str, str]]]]
) -> PlanContent:
    subquestions: list[SubquestionSpec] = []
    seen: set[str] = set()
    for i, (text, dimension, priority, queries) in enumerate(nodes, start=1):
        specs: list[QuerySpec] = []
        for query_text, query_class in queries:
            norm = normalize_query(query_text)
            if not norm or norm in seen:
                continue
            seen.add(norm)
            specs.append(
                QuerySpec(
                    key=f"s{i}q{len(specs) + 1}",
                    text=query_text,
                    query_class=query_class,
                    priority=priority,
                    source_classes=CLASS_SOURCES[query_class],
                )
            )
        if specs:
            subquestions.append(
                SubquestionSpec(
                    key=f"s{i}",
                    text=text,
                    dimension=dimension,
                    priority=priority,
                    budget=len(specs) + 2,
                    queries=specs,
                )
            )
    return PlanContent(
        question=shape.question + "?",
        planner=OFFLINE_PLANNER,
        subquestions=subquestions,
        source_classes=list(DEFAULT_SOURCE_CLASSES),
        budgets=Budgets(),
    )


def offline_plan(question: str) -> PlanContent:
    """A sensible plan for any question, deterministically; raises on an unusable one."""
    problems = question_problems(question)
    if problems:
        raise PlanSchemaError(problems)
    shape = analyze_question(question)
    nodes = {"effect": _effect_nodes, "compound": _compound_nodes}.get(shape.kind, _generic_nodes)(
        shape
    )
    plan = _build(shape, nodes)
    plan.question = " ".join(question.split())
    return plan


LLM_SYSTEM_PROMPT = (
    "You plan evidence research. Reply with one JSON object only, no prose: "
    '{"subquestions": [{"text": str, "dimension": str, "priority": 0-10, '
    '"queries": [{"text": str, "query_class": one of ' + json.dumps(list(QUERY_CLASSES)) + ", "
    '"source_classes": subset of ' + json.dumps(list(SOURCE_CLASSES)) + "}]}]}. "
    "Give 4-8 subquestions across different dimensions, 1-4 short keyword search queries "
    "each, no duplicate queries, and at least one counter-evidence query."
)


def _llm_content(raw: Any, question: str) -> dict[str, Any]:
    """Give the model's subquestions stable keys and the plan's defaults."""
    if not isinstance(raw, dict) or not isinstance(raw.get("subquestions"), list):
        raise PlanSchemaError(["the reply has no list of subquestions"])
    subquestions = []
    for i, sq in enumerate(raw["subquestions"], start=1):
        if not isinstance(sq, dict):
            raise PlanSchemaError([f"subquestion {i} is not an object"])
        queries = sq.get("queries")
        if not isinstance(queries, list):
            raise PlanSchemaError([f"subquestion {i} has no list of queries"])
        subquestions.append(
            {
                **sq,
                "key": f"s{i}",
                "budget": len(queries) + 2,
                "queries": [
                    {**q, "key": f"s{i}q{j}"} if isinstance(q, dict) else q
                    for j, q in enumerate(queries, start=1)
                ],
            }
        )
    return {"question": question, "subquestions": subquestions}


def llm_plan(question: str, client: LLMClient) -> PlanContent:
    """The model's plan when valid, else the offline plan saying why (never raises on it)."""
    offline = offline_plan(question)  # raises for an unusable question, before any call
    try:
        raw = client.chat_json(
            [
                {"role": "system", "content": LLM_SYSTEM_PROMPT},
                {"role": "user", "content": offline.question},
            ]
        )
        plan = parse_plan(_llm_content(raw, offline.question))
        if not any(q.query_class == "counter-evidence" for _, q in plan.enabled_queries()):
            raise PlanSchemaError(["it has no counter-evidence query"])
    except PlanSchemaError as exc:
        offline.planner_message = (
            f"The language model's plan was invalid ({'; '.join(exc.messages[:3])}); "
            "showing the offline plan instead."
        )
        return offline
    except Exception as exc:  # provider errors, timeouts: the offline plan stands
        offline.planner_message = (
            f"The language model could not be asked ({exc}); showing the offline plan instead."
        )
        return offline
    plan.planner = client.label
    return plan


def propose_plan(question: str, client: LLMClient | None) -> PlanContent:
    """The configured planner: the LLM one when an endpoint is set, else offline."""
    return offline_plan(question) if client is None else llm_plan(question, client)


# --- best-first expansion --------------------------------------------------------


def dimension_terms(question: str) -> dict[str, str]:
    """The words a follow-up query adds for each subquestion dimension:
    :data:`DIMENSION_TERMS` with the evidence and implementation words of the question's
    field."""
    r = field_register(question)
    return {**DIMENSION_TERMS, "evidence": r.results, "implementation": r.variants}


def search_terms(question: str) -> str:
    """The question as search terms: subject and outcome (and population) keywords for an
    effect question, else its content words."""
    shape = analyze_question(question)
    if shape.kind == "effect":
        parts = [keywords(shape.subject), keywords(shape.outcome), keywords(shape.population)]
        return " ".join(p for p in parts if p)
    if shape.kind == "compound":
        return clipped(keywords(shape.subject) or shape.topic, MAX_QUERY_TERMS - 3)
    return clipped(shape.topic, MAX_QUERY_TERMS - 3)


@dataclass(frozen=True)
class Followup:
    """A targeted query for a subquestion whose evidence is weak or one-sided."""

    subquestion_key: str
    key: str
    text: str
    query_class: str
    reason: str


def followup_queries(
    sq: SubquestionSpec,
    question: str,
    *,
    weak: bool,
    one_sided: bool,
    issued: set[str],
    limit: int,
    round_no: int,
) -> list[Followup]:
    """Targeted follow-ups: counter-evidence for one-sided nodes, broader terms for weak ones.

    Built from the question's own search terms (what it asks about and the outcome), not
    from the subquestion's prose: "What exactly are … and who counts as …" would make
    queries of "exactly" and "counts". The subquestion contributes its dimension word.
    """
    topic = search_terms(question)
    aspect = dimension_terms(question).get(sq.dimension, sq.dimension)
    candidates: list[tuple[str, str, str]] = []
    if one_sided:
        why = "one-sided: no passage found qualifies or contradicts it"
        candidates += [
            (f"{topic} no significant effect", "counter-evidence", why),
            (f"{topic} contradictory findings", "counter-evidence", why),
            (f"{topic} not associated", "counter-evidence", why),
        ]
    if weak:
        why = "weak: too few relevant passages from distinct sources"
        candidates += [
            (f"{topic} {aspect}".strip(), "source-specific", why),
            (f"{topic} systematic review", "source-specific", why),
            (f"{topic} {aspect} review".strip(), "source-specific", why),
        ]
    out: list[Followup] = []
    for text, query_class, reason in candidates:
        norm = normalize_query(text)
        if not norm or norm in issued or len(out) >= limit:
            continue
        issued.add(norm)
        key = f"{sq.key}r{round_no}f{len(out) + 1}"
        out.append(Followup(sq.key, key, " ".join(text.split()), query_class, reason))
    return out
