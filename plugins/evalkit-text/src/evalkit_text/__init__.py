"""evalkit-text: per-case metrics on a generated answer's text for paired-evalkit.

The plugin registers itself through the ``evalkit.plugins`` entry point (``text``):

* ``exact_match`` and ``f1``: SQuAD v1.1's answer normalisation and token F1, the maximum
  over a case's reference answers (:mod:`evalkit_text.squad`);
* ``rouge_l``: the F-measure of the longest common token subsequence, with the default
  tokenizer of Google's ``rouge-score`` (:mod:`evalkit_text.rouge`);
* ``contains(text=...)`` and ``regex(pattern=...)``: assertions scoring 1 or 0
  (:mod:`evalkit_text.assertions`);
* ``json_valid`` and ``json_schema(schema=PATH)``: the response parses as JSON, and it
  validates against a JSON Schema with the ``jsonschema`` library
  (:mod:`evalkit_text.json_checks`).

The records are :mod:`evalkit_text.records`. Registering them imports neither
``jsonschema`` nor any module beyond the standard library: a ``json_schema(...)`` metric
imports ``jsonschema`` when it is named.
"""

__version__ = "0.3.0"
