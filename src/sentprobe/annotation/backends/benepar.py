"""spaCy plus the Berkeley neural constituency parser (``benepar:<model>``), optional."""

from __future__ import annotations

from typing import Any

from sentprobe.annotation.record import AnnotatedSentence

from .base import AnnotatorError, _dist_version, _require
from .spacy import SpacyAnnotator


class BeneparAnnotator(SpacyAnnotator):
    """spaCy plus the Berkeley neural constituency parser: fills ``constituency``."""

    def __init__(
        self, model: str | None = None, *, spacy_model: str | None = None, **kwargs: Any
    ) -> None:
        _require(
            "benepar",
            "pip install benepar, then python -c 'import benepar; "
            'benepar.download("benepar_en3")\'',
        )
        super().__init__(spacy_model, **kwargs)
        self.bmodel = model or "benepar_en3"
        try:
            self.nlp.add_pipe("benepar", config={"model": self.bmodel})
        except Exception as e:
            raise AnnotatorError(f"benepar model {self.bmodel!r} unavailable ({e})") from None
        self.name = f"benepar:{self.bmodel}"

    def version(self) -> dict[str, str]:
        return super().version() | {"benepar": _dist_version("benepar"), "bmodel": self.bmodel}

    def to_record(self, doc: Any) -> AnnotatedSentence:
        rec = super().to_record(doc)
        rec.constituency = "(ROOT " + " ".join(s._.parse_string for s in doc.sents) + ")"
        return rec
