"""A library of structured abstracts long enough that a section holds several chunks.

Each abstract is one paragraph with section labels (BACKGROUND, METHODS, RESULTS,
CONCLUSIONS), like SciFact's, and longer than a chunk (1,000 characters): the ingest
service stores a *section* passage spanning the whole abstract and two or three *chunk*
passages inside it. A claim mined from a chunk sentence is then linked twice with the same
quote span (its anchor chunk, and its section found again by counter-evidence retrieval)
but different passages — the case that made every export of an untampered report 409.
"""

from __future__ import annotations

from typing import Any

from ledger.models import Library

ABSTRACTS = [
    (
        "Daily vitamin D3 and calcium in nursing-home residents: a randomized trial",
        "BACKGROUND Hip fractures are a leading cause of disability among elderly women living "
        "in nursing homes, and vitamin D insufficiency is common in this population. "
        "OBJECTIVE To determine whether daily supplementation with vitamin D3 and calcium "
        "reduces the risk of hip fractures in ambulatory institutionalized women. METHODS We "
        "randomly assigned 3,270 healthy ambulatory women with a mean age of 84 years to "
        "receive 800 IU of vitamin D3 and 1.2 g of elemental calcium daily or a double placebo "
        "for 18 months. Fractures were confirmed radiographically and serum parathyroid "
        "hormone was measured in a subgroup. RESULTS Daily vitamin D3 and calcium "
        "supplementation reduced the incidence of hip fractures by 43 percent over 18 months. "
        "The number of nonvertebral fractures was reduced by 32 percent among the women "
        "treated with vitamin D3 and calcium. Mean serum parathyroid hormone concentrations "
        "decreased by 44 percent from baseline in the treated group. CONCLUSIONS Vitamin D3 "
        "and calcium supplementation reduces the risk of hip fractures among elderly women "
        "living in nursing homes.",
    ),
    (
        "Annual high-dose oral vitamin D and falls and fractures in older women",
        "BACKGROUND Adherence to daily supplements is poor in older adults, and single annual "
        "doses of vitamin D have been proposed as an alternative. OBJECTIVE To test whether "
        "an annual oral dose of 500,000 IU of cholecalciferol administered in autumn or "
        "winter improves adherence and reduces the risk of falls and fractures. METHODS A "
        "double-blind, placebo-controlled trial randomized 2,256 community-dwelling women "
        "aged 70 years or older considered at high risk of fracture. Falls were recorded in "
        "monthly calendars and fractures were confirmed by X-ray for three to five years. "
        "RESULTS Women receiving annual high-dose cholecalciferol had 15 percent more falls "
        "than women receiving placebo. The incidence of fractures was 26 percent higher in "
        "the vitamin D group than in the placebo group. The excess of falls was greatest in "
        "the three months after each annual dose. CONCLUSIONS Annual high-dose oral "
        "cholecalciferol resulted in an increased risk of falls and fractures among older "
        "community-dwelling women.",
    ),
    (
        "Vitamin D supplementation and fracture risk in community-dwelling adults: a meta-analysis",
        "BACKGROUND Guidelines recommend vitamin D supplements to prevent fractures, but the "
        "evidence from trials in community-dwelling older adults is inconsistent. METHODS We "
        "searched PubMed, Embase and the Cochrane Library for randomized clinical trials of "
        "vitamin D, calcium, or combined supplementation with fracture outcomes in adults "
        "older than 50 years living in the community. Pooled risk ratios were estimated with "
        "random-effects models across 33 trials including 51,145 participants. RESULTS "
        "Vitamin D supplementation alone was not associated with a lower risk of hip "
        "fracture compared with placebo or no treatment. Calcium supplementation alone was "
        "not associated with a lower risk of total fracture. Combined calcium and vitamin D "
        "supplementation was not associated with a significant reduction in hip fractures in "
        "community-dwelling adults. CONCLUSIONS The use of supplements that included calcium, "
        "vitamin D, or both was not associated with a lower risk of fractures among "
        "community-dwelling older adults.",
    ),
    (
        "Serum 25-hydroxyvitamin D and hip fracture in a prospective cohort of older adults",
        "BACKGROUND Low vitamin D status has been associated with bone loss, but prospective "
        "data on hip fracture in older men and women are limited. METHODS We followed a "
        "cohort of 9,000 adults aged over 65 years for a median of ten years after measuring "
        "serum 25-hydroxyvitamin D concentrations at baseline. Hip fractures were identified "
        "from hospital records and hazard ratios were adjusted for age, sex, body mass index, "
        "smoking and physical activity. RESULTS Low serum 25-hydroxyvitamin D concentrations "
        "were associated with a higher incidence of hip fractures during ten years of "
        "follow-up. Participants in the lowest quartile had a 1.7-fold higher hazard of hip "
        "fracture than those in the highest quartile. The association was similar in men and "
        "in women. CONCLUSIONS Vitamin D deficiency is associated with an increased risk of "
        "hip fracture in older adults, although observational data cannot establish that "
        "supplementation would prevent fractures.",
    ),
    (
        "Vitamin D3 at 2,000 IU per day and incident fractures in healthy midlife and older adults",
        "BACKGROUND Whether vitamin D supplementation prevents fractures in adults who are "
        "not selected for deficiency or low bone mass remains uncertain. METHODS In an "
        "ancillary study of a nationwide randomized, placebo-controlled trial, 25,871 men aged "
        "50 years or older and women aged 55 years or older were assigned to vitamin D3 at "
        "2,000 IU per day or placebo. Incident fractures were adjudicated by centralized "
        "review of medical records over a median follow-up of 5.3 years. RESULTS Vitamin D3 "
        "supplementation did not result in a significantly lower risk of total fractures than "
        "placebo. Vitamin D3 did not reduce the risk of nonvertebral fractures or hip "
        "fractures compared with placebo. The results did not differ according to baseline "
        "serum 25-hydroxyvitamin D concentration. CONCLUSIONS Among generally healthy midlife "
        "and older adults, vitamin D3 supplementation did not significantly lower the risk of "
        "fractures.",
    ),
    (
        "Vitamin D supplementation and muscle strength and balance in deficient older adults",
        "BACKGROUND Muscle weakness and impaired balance are risk factors for falls, and "
        "vitamin D receptors are expressed in skeletal muscle. OBJECTIVE To estimate the "
        "effect of vitamin D supplementation on muscle strength, balance and falls in older "
        "adults with low vitamin D status. METHODS We pooled randomized controlled trials of "
        "oral vitamin D in adults aged 60 years or older with baseline serum "
        "25-hydroxyvitamin D below 25 nmol/L. RESULTS Vitamin D supplementation improved "
        "lower-limb muscle strength in deficient older adults. Vitamin D supplementation "
        "improved balance measured by body sway in deficient older adults. Daily doses "
        "between 800 and 1,000 IU reduced the risk of falls by 19 percent in the pooled "
        "trials. CONCLUSIONS Correcting vitamin D deficiency may improve muscle strength and "
        "balance, a possible mechanism for fewer falls in older adults.",
    ),
    (
        "Exercise programmes for preventing falls in older people living in the community",
        "BACKGROUND Approximately one third of community-dwelling people over 65 years fall "
        "each year, and falls are a common cause of fractures. METHODS We included "
        "randomized trials of exercise interventions in people aged 60 years or older living "
        "in the community, and pooled the rate of falls with random-effects models across "
        "108 trials with 23,407 participants. RESULTS Group and home-based exercise "
        "programmes reduced the rate of falls by 23 percent in older people living in the "
        "community. Programmes that included balance and functional exercises were the most "
        "effective at reducing falls. Exercise probably reduced the number of people "
        "experiencing one or more fall-related fractures. CONCLUSIONS Exercise programmes "
        "reduce the rate of falls in community-dwelling older people, and balance training "
        "was the most effective component.",
    ),
    (
        "Calcium supplements without vitamin D and cardiovascular events: a meta-analysis",
        "BACKGROUND Calcium supplements are widely used by older people for bone health, "
        "but their cardiovascular safety has been questioned. METHODS We searched for "
        "placebo-controlled trials of calcium supplements of at least 500 mg per day, without "
        "coadministered vitamin D, with more than 100 participants followed for more than one "
        "year. Pooled relative risks were estimated for myocardial infarction, stroke and "
        "death across 15 trials. RESULTS Calcium supplementation without coadministered "
        "vitamin D was associated with a 31 percent increased risk of myocardial infarction. "
        "There were non-significant increases in the risk of stroke and of death. The effect "
        "was consistent across trials and independent of age and sex. CONCLUSIONS Calcium "
        "supplements without coadministered vitamin D are associated with an increased risk "
        "of myocardial infarction, and a reassessment of their role in osteoporosis "
        "management is warranted.",
    ),
]


def ingest_long_library(
    name: str = "long-vitamin-d", edited: dict[int, str] | None = None
) -> Library:
    """Ingest the abstracts (``edited``: document number -> replacement body)."""
    from ledger.services.ingest import ingest_documents
    from ledger.services.sparse_index import sync_sparse_index
    from tests.research.fixtures import fixture_document

    # Ownerless and public, like a corpus an operator imports: every plan may search it.
    library, _ = Library.objects.get_or_create(name=name, owner=None, defaults={"public": True})
    docs = [
        fixture_document(name, n, title, (edited or {}).get(n, body))
        for n, (title, body) in enumerate(ABSTRACTS, 1)
    ]
    results = ingest_documents(docs, library)
    assert all(r.status != "failed" for r in results), [r.error for r in results]
    sync_sparse_index(library)
    return library


def vitamin_d_plan() -> dict[str, Any]:
    """Two subquestions, support and counter-evidence queries, library search only."""
    library = ["library"]
    return {
        "question": "Does vitamin D supplementation reduce the risk of fractures or falls in "
        "older adults?",
        "budgets": {"queries": 12, "rounds": 1},
        "subquestions": [
            {
                "key": "s1",
                "text": "Does vitamin D supplementation reduce fractures in older adults?",
                "dimension": "evidence",
                "priority": 3,
                "budget": 6,
                "queries": [
                    {
                        "key": "s1q1",
                        "text": "vitamin D supplementation hip fracture randomized trial",
                        "query_class": "benchmark",
                        "source_classes": library,
                    },
                    {
                        "key": "s1q2",
                        "text": "vitamin D did not reduce fracture risk",
                        "query_class": "counter-evidence",
                        "source_classes": library,
                    },
                ],
            },
            {
                "key": "s2",
                "text": "Does vitamin D supplementation reduce falls in older adults?",
                "dimension": "evidence",
                "priority": 2,
                "budget": 5,
                "queries": [
                    {
                        "key": "s2q1",
                        "text": "vitamin D falls muscle strength balance older adults",
                        "query_class": "mechanism",
                        "source_classes": library,
                    },
                    {
                        "key": "s2q2",
                        "text": "high-dose vitamin D increased falls",
                        "query_class": "counter-evidence",
                        "source_classes": library,
                    },
                ],
            },
        ],
    }
