"""Language code that holds in any domain: what a sentence says and does.

This package is the one home of the sentence splitter, the lexicon and every cue pattern
and word list (``tests/platform/test_language_home.py`` fails on one kept elsewhere):

- :mod:`research.pipeline.language.sentences`: the one sentence splitter
  (:func:`~research.pipeline.language.sentences.split_sentences`, its abbreviations),
  clause breaks for quotes and for mining, a compound question's questions and a
  coordinated phrase's items.
- :mod:`research.pipeline.language.lexicon`: word lists (stopwords and the task lists that
  differ from them, negations, hedges, question words, measure, people and population
  nouns, field cues, synthesis's and the answer table's words, follow-up query terms), the
  tokenizer, the Snowball stemmer, content words and their coverage.
- :mod:`research.pipeline.language.direction`: which way an effect goes: up and down words,
  "no effect" phrases, relation verbs, the tables of opposites and antonyms, negation.
- :mod:`research.pipeline.language.quantities`: numbers with units, years, version numbers.
- :mod:`research.pipeline.language.effects`: the verbs, markers and clause patterns of
  effect questions ("Does X reduce Y in Z?") that :mod:`research.pipeline.effect` reads.
- :mod:`research.pipeline.language.verdict_cues`: prose cues of verification (safety,
  correlation, causation, comparison, forecast), of the negation counter query and of
  expansion's qualifying passages.
- :mod:`research.pipeline.language.formats`: patterns of formats rather than prose: DOIs
  and arXiv ids, arXiv query prefixes, a verifier rationale's internals.
- :mod:`research.pipeline.language.roles_model`: a learned sentence-role classifier
  (background / aim / method / result / conclusion) over the shipped sentence encoder,
  trained on the heading-labelled sentences of structured abstracts by
  ``manage.py train_roles`` (weights and model card in ``weights/roles/``); mining's
  sentence roles (:mod:`research.pipeline.claims.roles`) come from it.
- ``weights/relevance/``: the fitted weights of mining's relevance score and their off-topic
  floor (:mod:`research.pipeline.claims.relevance` reads them), fitted by
  ``manage.py train_relevance`` on claims and their rationale sentences; model card beside
  them.
- :mod:`research.pipeline.language.structure`: what a sentence's form says, beside the
  model: structure labels (headings, "RESULTS:"), boilerplate, fragments, and the aim cue
  (it reads aims better than the model does).
- :mod:`research.pipeline.language.cues`: claim cues: a claim's type, named things, a
  finding's parts, reporting frames and verbs, a question's outcomes, a plan's scope.
- :mod:`research.pipeline.language.design`: study-design cues: a source's design and on
  whom it was done (animals, cells, people, ages), and designs as a scope names them.
"""
