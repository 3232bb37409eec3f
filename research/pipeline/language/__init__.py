"""Language code that holds in any domain: what a sentence says and does.

Issue 23 makes this package the one home of the splitter, the lexicon and every cue
pattern. Today it holds one thing:

- :mod:`research.pipeline.language.roles_model`: a learned sentence-role classifier
  (background / aim / method / result / conclusion) over the shipped sentence encoder,
  trained on the heading-labelled sentences of SciFact's structured abstracts by
  ``manage.py train_roles`` (weights and model card in ``weights/roles/``). Mining does not
  use it yet: sentence roles still come from :mod:`research.pipeline.claims.roles`.
"""
