"""UDPipe 1 (``udpipe:<model file>``), optional: what X-Probe parsed with."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from sentprobe.annotation.record import AnnotatedSentence

from .base import Annotator, AnnotatorError, Sentence, _dist_version, _require, _text, _words


def _feats(s: str | None) -> dict[str, str]:
    if not s or s == "_":
        return {}
    return dict(kv.split("=", 1) for kv in s.split("|") if "=" in kv)


class UDPipeAnnotator(Annotator):
    """UDPipe 1 (``pip install ufal.udpipe``) with a local ``.udpipe`` model file."""

    def __init__(self, model_file: str | None = None) -> None:
        udpipe = _require("ufal.udpipe", "pip install ufal.udpipe (and download a .udpipe model)")
        if not model_file or not Path(model_file).is_file():
            raise AnnotatorError(
                f"udpipe:<model file> needs an existing model file, got {model_file!r}"
            )
        self.model = udpipe.Model.load(str(model_file))
        if self.model is None:
            raise AnnotatorError(f"UDPipe could not load the model {model_file!r}")
        self._udpipe = udpipe
        self.name = f"udpipe:{Path(model_file).name}"
        self.lang = Path(model_file).name.split("-")[0][:2] or "und"

    def version(self) -> dict[str, str]:
        return {"annotator": self.name, "ufal.udpipe": _dist_version("ufal.udpipe")}

    def annotate(
        self, sentences: Iterable[Sentence], *, pretokenized: bool = False
    ) -> Iterator[AnnotatedSentence]:
        from sentprobe.annotation.conllu import parse_conllu

        u = self._udpipe
        pipes = {
            fmt: u.Pipeline(self.model, fmt, u.Pipeline.DEFAULT, u.Pipeline.DEFAULT, "conllu")
            for fmt in ("horizontal", "tokenize")
        }
        for item in sentences:
            words = _words(item, pretokenized)
            text = " ".join(words) if words is not None else _text(item)
            out = pipes["horizontal" if words is not None else "tokenize"].process(text)
            recs = parse_conllu(out, lang=self.lang, source=self.name)
            rec = recs[0]
            for extra in recs[1:]:  # UDPipe split the sentence: attach later roots to it
                shift = len(rec)
                rec.tokens += extra.tokens
                rec.upos += extra.upos
                rec.xpos += extra.xpos
                rec.lemmas += extra.lemmas
                rec.feats += extra.feats
                rec.deprels += extra.deprels
                rec.heads += [h + shift if h else rec.root + 1 for h in extra.heads]
            rec.text = _text(item)
            yield rec
