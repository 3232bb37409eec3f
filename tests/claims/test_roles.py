"""Sentence roles, structure labels, study designs, scope and facets: the miner's pure parts."""

from __future__ import annotations

from ledger.models import SentenceRole
from research.pipeline.claims import roles as roles_module
from research.pipeline.claims.design import profile_source
from research.pipeline.claims.facets import direction_of, facets
from research.pipeline.claims.roles import (
    DROP_REASONS,
    FINDING_ROLES,
    FRAGMENT,
    MIN_NON_FINDING_P,
    NON_FINDING_ROLES,
    ROLES,
    Role,
    classify_sentence,
)
from research.pipeline.claims.scope import parse_scope, preference, scope_exclusion
from research.pipeline.language.structure import label_spans

# Sentences of the vitamin D run's ledger that were claims before findings-only mining.
METHOD_SENTENCES = [
    "Central DXA osteodensitometry was performed.",
    "Controls (3 : 1) were frequency-matched to cases.",
    "A low calcium lunch was provided at mid-day.",
    "Serum 25(OH)D concentrations were measured by using enzyme-linked immunoassay at "
    "baseline (October 2006) and endpoint (March 2007).",
    "Nested case-control study was conducted using data collected during 10 years of "
    "follow-up of the French PAQUID (Personnes Agées QUID) community-based cohort.",
    "The main outcome measure was the occurrence of an injurious fall, which was defined as "
    "a fall resulting in hospitalization, fracture, head trauma or death.",
    "All subjects received calcium, 1000 mg/d.",
    "Randomized, placebo-controlled, double-blind 22-wk intervention study was conducted in "
    "men and women aged 20-40 y (n = 238) by using different supplemental doses (0, 5, 10, "
    "and 15 microg/d) of vitamin D(3) throughout the winter.",
]
AIM_SENTENCES = [
    "Our objective is to estimate and compare the prevalence of selected adverse consequences "
    "associated with unmet need for assistance among older adults.",
    "To estimate the impact of benzodiazepine-associated injurious falls in a population of "
    "elderly persons.",
    "In this review, we will summarize the mechanisms that are presumed to underlie the "
    "relationship between vitamin D and understand its biology.",
    "We aimed to establish the distribution of dietary vitamin D required to maintain serum "
    "concentrations above several proposed cutoffs.",
]
FINDINGS = [
    "Vitamin D insufficiency and deficiency increase the risk of skeletal fractures.",
    "Treatment with 5 mg/d of risedronate, compared with placebo, decreased the cumulative "
    "incidence of new vertebral fractures by 41 % (95% CI, 18%-58%) over 3 years.",
    "These findings suggest that high-dose vitamin D does not prevent falls.",
    "We found that daily supplementation lowered the rate of hip fracture.",
    # Other domains: news, economics, software.
    "Unemployment fell to 3.9 percent in March, the lowest rate since 2001.",
    "A 10% rise in the minimum wage reduced teen employment by 1.2% in the affected states.",
    "The new garbage collector cut p99 latency from 80 ms to 12 ms compared with the old one.",
    "Turnout was higher in districts with mail-in voting than in districts without it.",
    # A design that reports is the finding's subject, not the study's description.
    "A randomized trial of vitamin D showed fewer falls in the treated group.",
    "A cross-sectional survey of 400 clinics reported lower wait times.",
]


def test_it_calls_aim_sentences_non_findings_by_the_aim_cue():
    # The learned model reads "We aimed to establish …" as a conclusion (p 0.37) and "To
    # estimate the impact …" as a result: the aim cue is what drops them.
    for sentence in AIM_SENTENCES:
        assert classify_sentence(sentence) == Role("aim", "aim cue"), sentence


def test_it_drops_a_method_sentence_only_when_the_model_is_sure():
    roles = {s: classify_sentence(s) for s in METHOD_SENTENCES}
    dropped = [s for s, role in roles.items() if role.role == "method"]
    # Each dropped one was read as a method at MIN_NON_FINDING_P or more; the others stay
    # statements (kept), never findings the model read as results.
    assert len(dropped) >= 4, roles
    for sentence, role in roles.items():
        assert role.role in ("method", "statement"), (sentence, role)
        assert role.cue.startswith("sentence-role model: method"), (sentence, role)
    assert "All subjects received calcium, 1000 mg/d." in dropped


def test_it_keeps_a_statement_the_model_reads_as_background():
    # A document's background is often the claim a reader keeps (policy and documentation
    # text reads as background to a model of abstracts): it stays a statement.
    role = classify_sentence(
        "Vitamin D insufficiency and deficiency increase the risk of skeletal fractures."
    )
    assert role.role == "statement" and role.is_finding
    assert role.cue.startswith("sentence-role model: background")


def test_it_calls_results_and_conclusions_findings_in_any_domain():
    for sentence in FINDINGS:
        assert classify_sentence(sentence).is_finding, sentence
    roles = [classify_sentence(s).role for s in FINDINGS]
    assert roles.count("result") + roles.count("conclusion") >= len(FINDINGS) - 1, roles


def test_a_model_reading_below_the_threshold_is_a_statement(monkeypatch):
    monkeypatch.setattr(
        roles_module, "learned_roles", lambda texts: [("method", 0.79)] * len(texts)
    )
    assert classify_sentence("The samples were stored at -80 C.").role == "statement"
    monkeypatch.setattr(roles_module, "learned_roles", lambda texts: [("method", 0.8)] * len(texts))
    assert classify_sentence("The samples were stored at -80 C.").role == "method"
    assert MIN_NON_FINDING_P == 0.8


# Sentences that say what the authors did with the data, though they carry result words.
# The first three are from the SciFact vitamin D run (the first was kept as a claim there).
ANALYSIS_STEPS = [
    "The point on each linear trend line corresponding to an odds ratio of 0.50 provided the "
    "prediagnostic Vitamin D intake or 25-hydroxyvitamin D concentration associated with 50% "
    "lower risk compared to <100IU/day Vitamin D or <13ng/ml serum 25-hydroxyvitamin D.",
    "Dose-response gradients from observational studies of Vitamin D intake and serum "
    "25-hydroxyvitamin D were plotted as trend lines.",
    "Odds ratios for colorectal cancer were adjusted for age, smoking and body mass index.",
    "We adjusted for household income and region in every model of wage growth.",
    "Data from the 14 trials were pooled using a random-effects model.",
    "Latency was measured using the p99 of 10,000 requests per run.",
]
# Result sentences that mention an analysis step in passing: still findings.
ANALYSIS_IN_PASSING = [
    "After adjustment for age, higher 25(OH)D was associated with fewer falls (HR 0.78, 95% "
    "CI 0.64-0.95).",
    "After the models were adjusted for income, minimum wage increases reduced teen "
    "employment by 1.2 percent.",
    "Data were pooled from 12 trials; vitamin D reduced falls by 19% (RR 0.81, 95% CI 0.71-0.92).",
]


def test_it_lists_the_same_sentence_roles_as_the_ledger():
    assert tuple(SentenceRole.values) == ROLES
    assert set(ROLES) == FINDING_ROLES | NON_FINDING_ROLES
    assert not FINDING_ROLES & NON_FINDING_ROLES
    assert set(DROP_REASONS) == NON_FINDING_ROLES


def test_it_reads_analysis_steps_as_methods_and_results_in_passing_as_findings():
    # The model, not a cue, tells an analysis step from a result that mentions one; it
    # misses some steps (the first and the last two of ANALYSIS_STEPS are kept: a reviewer
    # sees them), never a result.
    steps = [classify_sentence(s).role for s in ANALYSIS_STEPS]
    assert steps.count("method") >= 3, steps
    for sentence in ANALYSIS_IN_PASSING:
        assert classify_sentence(sentence).is_finding, sentence


def test_it_uses_the_structure_label_a_sentence_sits_under():
    assert classify_sentence("The trial enrolled 250 patients.", "DESIGN, SETTING").role == "design"
    assert classify_sentence("Nothing changed in the control arm.", "RESULTS").role == "result"
    # strong result cues beat a methods label ("METHODS AND RESULTS" abstracts mix both)
    mixed = classify_sentence("Mortality was lower with X than placebo (p < 0.01).", "METHODS")
    assert mixed.role == "result"


def test_it_finds_inline_labels_and_drops_fragments_and_boilerplate():
    text = "Gaps remain for vitamin D.   OBJECTIVE We aimed to test it. RESULTS Falls fell."
    assert [s.label for s in label_spans(text)] == ["OBJECTIVE", "RESULTS"]
    assert label_spans("The USPSTF and AQUACEL dressing were used.") == []
    assert classify_sentence("And 249 [99.6%] were white) who presented.").role == "fragment"
    assert classify_sentence("It was lower in women.").role == "fragment"
    assert classify_sentence("Funded by the National Institutes of Health.").role == "boilerplate"
    assert classify_sentence("Does vitamin D prevent falls?").role == "question"


def test_it_profiles_a_source_design_and_population():
    rct = profile_source(
        "Vitamin D and falls",
        "In a randomized, placebo-controlled trial of 2,256 community-dwelling women aged 70 "
        "years or older, an annual dose increased falls.",
    )
    assert rct.design == "rct" and rct.humans is True
    assert rct.age_min == 70 and rct.age_max is None
    meta = profile_source("Vitamin D and fracture: a meta-analysis of randomized trials", "")
    assert meta.design == "meta-analysis"
    mice = profile_source(
        "Statins and bone",
        "Statins increased bone formation in mice. Rats treated with "
        "lovastatin had more trabecular bone; knockout mice did not.",
    )
    assert mice.design == "animal" and mice.humans is False
    young = profile_source("Winter vitamin D", "Men and women aged 20-40 y (n = 238) took part.")
    assert (young.age_min, young.age_max) == (20, 40)
    citing = profile_source(
        "Vitamin D: the sunshine vitamin",
        "A meta-analysis published in 2007 showed that vitamin D supplementation was "
        "associated with reduced mortality. Treatment is recommended for deficient patients.",
    )
    assert citing.design != "meta-analysis"  # it cites one; it is not one
    blog = profile_source("Release notes 2.0", "The new release adds a faster parser.")
    assert blog.design == ""


def test_it_parses_a_scope_and_applies_it_as_filters_and_preferences():
    scope = parse_scope("Randomized controlled trials and meta-analyses preferred; adults over 60")
    assert scope.preferred_designs == ("meta-analysis", "rct")
    assert scope.age_min == 60 and scope.people == ("adults",) and not scope.unparsed
    young = profile_source("Winter vitamin D", "Men and women aged 20-40 y (n = 238) took part.")
    assert scope_exclusion(scope, young).startswith("outside the scope: participants aged 20-40 y")
    mice = profile_source("Statins and bone", "Mice and rats were treated; mice lost bone.")
    assert "animal study" in scope_exclusion(scope, mice)
    old = profile_source("Falls trial", "A randomized trial in adults aged 65 years or older.")
    assert scope_exclusion(scope, old) == "" and preference(scope, old) == 1.0
    strict = parse_scope("RCTs only; published since 2010; no animal studies; zzz qqq")
    assert strict.required_designs == ("rct",) and strict.year_from == 2010
    assert strict.excluded_designs == ("animal",) and strict.unparsed == ("zzz qqq",)
    cohort = profile_source("A cohort", "A prospective cohort of 9,000 adults.", year=2005)
    assert "only for randomized controlled trial" in scope_exclusion(strict, cohort)


def test_it_reads_population_intervention_outcome_direction_and_effect():
    f = facets(
        "In a randomized controlled trial of 3,270 older women living in nursing homes, daily "
        "vitamin D3 and calcium supplementation reduced the incidence of hip fractures by 43 "
        "percent over 18 months."
    )
    assert f.population.startswith("3,270 older women")
    assert f.intervention == "daily vitamin D3 and calcium supplementation"
    assert f.outcome == "the incidence of hip fractures"
    assert (f.direction, f.effect) == ("decreases", "by 43 percent")
    null = facets(
        "Minimum wage increases had no significant effect on teen employment.", "US states"
    )
    assert (null.intervention, null.outcome, null.direction) == (
        "Minimum wage increases",
        "teen employment",
        "no effect",
    )
    assert null.population == "US states"


def test_an_effect_keeps_its_confidence_interval_and_the_interval_is_no_second_effect():
    statins = facets(
        "Treatment with statins significantly reduced the risk of all cause mortality (odds "
        "ratio 0.88, 95% confidence interval 0.81 to 0.96), major coronary events (0.70)."
    )
    assert statins.effect == "odds ratio 0.88, 95% confidence interval 0.81 to 0.96"
    assert facets("The hazard ratio was 0.75 (95% CI 0.6-0.9).").effect == (
        "hazard ratio was 0.75 (95% CI 0.6-0.9)"
    )


def test_a_shortfall_is_not_a_null_effect():
    # From the vitamin D report: the evidence table gave this sentence "no effect".
    shortfall = (
        "In most persons, these concentrations could not be reached with the currently "
        "recommended intakes of 200 and 600 IU vitamin D/d for younger and older adults."
    )
    assert direction_of(shortfall) != "no effect"
    # An explanation denied is a property denied, no null result (issue 26.6; see
    # tests/claims/test_facets.py); an effect reported absent is one.
    assert direction_of("The benefit could not be explained by adherence.") == ""
    assert direction_of("Tariffs did not reduce imports from the region.") == "no effect"
    assert direction_of("Static typing was not associated with fewer defects.") == (
        "not associated"
    )


def test_it_calls_a_sentence_that_opens_with_a_bare_verb_a_fragment():
    # The subject is in the sentence before: "Statins lower LDL. Only moderately reduce …"
    role = classify_sentence("Only moderately reduce CVD mortality.")
    assert role.role == FRAGMENT and "'reduce'" in role.cue
    for sentence in (
        "Increased physical activity reduced falls.",  # a participle opening a noun phrase
        "Lower doses improved outcomes.",
        "Early treatment reduced mortality.",
    ):
        assert classify_sentence(sentence).role != FRAGMENT, sentence


def test_it_drops_a_statement_of_what_is_not_known_by_the_gap_cue():
    # The model reads it as background, which alone would keep it as a statement.
    role = classify_sentence(
        "Optimal serum concentrations of 25-hydroxyvitamin D [25(OH)D] have not been defined."
    )
    assert role == Role("background", "gap cue") and not role.is_finding
    assert classify_sentence("Whether tariffs reduce imports remains unclear.").role == "background"
    # a finding that says something was not changed is no gap
    assert classify_sentence("Tariffs did not reduce imports from the region.").is_finding
