"""What crosses the process boundary, guarded: bounded readers, safe writes, masked secrets.

Holds the bounds on what evalkit reads and the readers that enforce them (:mod:`.limits`,
:mod:`.bounded_yaml`), what an input file is, to say what to pass instead
(:mod:`.input_files`), gzip data decompressed, and damage named by its byte
(:mod:`.gzip_data`), how output files are checked and written (:mod:`.outputs`) and
locked while a run writes them (:mod:`.runlock`), secrets masked by value wherever they
could be shown (:mod:`.redaction`), HTTP header names and values checked before anything is
sent (:mod:`.headers`), and an exception as one message a person can act on
(:mod:`.error_messages`; a pydantic validation error of a declarative file as one line,
:mod:`.model_errors`; an error that names a setting, spelled as Python's keyword argument
or as the command line's option, :mod:`.setting_names`).

May import: nothing of evalkit (the standard library, pyyaml, and pydantic for
:mod:`.model_errors`, which only the readers of declarative files import), so every floor
above can use it.
"""
