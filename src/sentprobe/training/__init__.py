"""Training the sentence encoders of the papers, and reading trained runs back as encoders.

Modules: ``vocab`` (vocabularies, word vectors, padded batches), ``architectures`` (the
encoders: ``build_encoder``), ``checkpoint`` (the run directory and ``TrainedRunEncoder``).
Importing this package imports no torch; the submodules do.
"""
