"""CoNLL-U in and out: gold treebanks as annotations, and annotations as CoNLL-U for inspection.

Reading streams line by line (plain, gzip, bz2 or xz) and parses each token line with the
``conllu`` library's field parsers, so a malformed line is reported with its own line number
instead of the sentence's. Syntax is kept over *words*; multi-word tokens (``18-19 del``) are
kept as spans in ``AnnotatedSentence.mwt`` so the surface sentence can be rendered. Empty
nodes (``8.1``, enhanced UD only) are skipped.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from conllu.parser import DEFAULT_FIELDS, ParseException, parse_line

from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.errors import DataError
from sentprobe.io import iter_lines

_WORD_ID = re.compile(r"^[1-9][0-9]*$")
_RANGE_ID = re.compile(r"^([1-9][0-9]*)-([1-9][0-9]*)$")
_EMPTY_ID = re.compile(r"^[0-9]+\.[1-9][0-9]*$")
_TREEBANK_LANG = re.compile(r"^([a-z]{2,3})_[a-z0-9]+-ud-")


def _lang_from_path(path: str | Path) -> str:
    m = _TREEBANK_LANG.match(Path(path).name)
    return m.group(1) if m else "und"


def read_conllu(
    path: str | Path, *, lang: str | None = None, source: str | None = None
) -> Iterator[AnnotatedSentence]:
    """Yield one record per sentence of a CoNLL-U file (``.gz`` etc. opened transparently).

    ``lang`` defaults to the treebank code in the file name (``fr_gsd-ud-dev`` -> ``fr``).
    """
    lang = lang or _lang_from_path(path)
    yield from _parse_lines(iter_lines(path), source or str(path), lang)


def parse_conllu(
    text: str, *, lang: str = "und", source: str = "<string>"
) -> list[AnnotatedSentence]:
    """Parse CoNLL-U held in a string (e.g. what UDPipe returns)."""
    lines = enumerate(text.splitlines(), start=1)
    return list(_parse_lines(lines, source, lang))


class _Builder:
    def __init__(self, start: int) -> None:
        self.start = start
        self.meta: dict[str, str] = {}
        self.words: list[dict] = []
        self.ranges: list[tuple[int, int, str, int]] = []


def _parse_lines(
    lines: Iterable[tuple[int, str]], source: str, lang: str
) -> Iterator[AnnotatedSentence]:
    cur: _Builder | None = None
    lineno = 0
    for lineno, line in lines:
        if not line.strip():
            if cur is not None:
                yield _finish(cur, source, lang)
                cur = None
            continue
        if cur is None:
            cur = _Builder(lineno)
        if line.startswith("#"):
            key, sep, value = line[1:].partition("=")
            if sep:
                cur.meta.setdefault(key.strip(), value.strip())
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise DataError(source, lineno, f"expected 10 tab-separated columns, found {len(cols)}")
        tid = cols[0]
        if _EMPTY_ID.match(tid):
            continue
        m = _RANGE_ID.match(tid)
        if m:
            first, last = int(m.group(1)), int(m.group(2))
            if last <= first:
                raise DataError(source, lineno, f"bad multi-word token range {tid!r}")
            cur.ranges.append((first, last, cols[1], lineno))
            continue
        if not _WORD_ID.match(tid):
            raise DataError(source, lineno, f"bad token id {tid!r}")
        try:
            tok = parse_line(line, DEFAULT_FIELDS)
        except (ParseException, ValueError) as e:
            raise DataError(source, lineno, f"malformed token line: {e}") from None
        if tok["id"] != len(cur.words) + 1:
            raise DataError(
                source, lineno, f"token id {tid} out of sequence (expected {len(cur.words) + 1})"
            )
        if not isinstance(tok["head"], int):
            raise DataError(source, lineno, f"HEAD must be an integer, got {cols[6]!r}")
        tok["_line"] = lineno
        cur.words.append(tok)
    if cur is not None:
        yield _finish(cur, source, lang)


def _finish(b: _Builder, source: str, lang: str) -> AnnotatedSentence:
    n = len(b.words)
    if n == 0:
        raise DataError(source, b.start, "sentence without token lines")
    for w in b.words:
        if not 0 <= w["head"] <= n:
            raise DataError(source, w["_line"], f"HEAD {w['head']} outside the sentence (1-{n})")
    if not any(w["head"] == 0 for w in b.words):
        raise DataError(source, b.start, "sentence has no root (no token with HEAD 0)")
    mwt = []
    for first, last, form, lineno in b.ranges:
        if last > n:
            raise DataError(source, lineno, f"multi-word token {first}-{last} beyond the words")
        mwt.append((first - 1, last - 1, form))

    def col(name: str) -> list[str]:
        return [w[name] if w[name] is not None else "_" for w in b.words]

    return AnnotatedSentence(
        tokens=col("form"),
        upos=col("upos"),
        heads=[w["head"] for w in b.words],
        deprels=col("deprel"),
        lemmas=col("lemma"),
        xpos=col("xpos"),
        feats=[dict(w["feats"] or {}) for w in b.words],
        text=b.meta.get("text"),
        sent_id=b.meta.get("sent_id"),
        lang=lang,
        mwt=mwt,
    )


def format_conllu(record: AnnotatedSentence) -> str:
    """One sentence as a CoNLL-U block (with its trailing blank line)."""
    out: list[str] = []
    if record.sent_id is not None:
        out.append(f"# sent_id = {record.sent_id}")
    out.append(f"# text = {record.text if record.text is not None else ' '.join(record.tokens)}")
    starts = {first: (last, form) for first, last, form in record.mwt}

    def get(column: list, i: int, default: Any = "_") -> Any:
        return column[i] if i < len(column) and column[i] not in (None, "") else default

    for i, form in enumerate(record.tokens):
        if i in starts:
            last, surface = starts[i]
            out.append(f"{i + 1}-{last + 1}\t{surface}" + "\t_" * 8)
        feats = get(record.feats, i, {})
        feats_s = "|".join(f"{k}={v}" for k, v in sorted(feats.items())) or "_"
        out.append(
            "\t".join(
                [
                    str(i + 1),
                    form,
                    get(record.lemmas, i),
                    get(record.upos, i),
                    get(record.xpos, i),
                    feats_s,
                    str(record.heads[i]),
                    get(record.deprels, i),
                    "_",
                    "_",
                ]
            )
        )
    return "\n".join(out) + "\n\n"


def write_conllu(records: Iterable[AnnotatedSentence], dest: str | Path | TextIO) -> int:
    """Write records as CoNLL-U to a path (``.gz`` compresses) or an open text file."""
    if isinstance(dest, (str, Path)):
        import gzip

        path = Path(dest)
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "wt", encoding="utf-8") as f:
            return write_conllu(records, f)
    n = 0
    for record in records:
        dest.write(format_conllu(record))
        n += 1
    return n


def conllu_string(records: Iterable[AnnotatedSentence]) -> str:
    buf = io.StringIO()
    write_conllu(records, buf)
    return buf.getvalue()
