"""Prose in any language from the LibreOffice help, and the sample script's clear errors."""

from __future__ import annotations

from collections import Counter

import build_multilingual_samples
import pytest
from corpora.libreoffice import help_package, libreoffice_help_dir, libreoffice_help_sentences
from corpora.prose import in_language, prose_sentences_any

from sentprobe.errors import SentprobeError

PAGE = """<html><body><div id="DisplayArea">
<p>Élément ajouté à la liste. Choisissez Outils - Options - Writer.</p>
<p>choisissez une option.</p>
<p>Appuyez sur Ctrl+Maj+F5 pour ouvrir le navigateur.</p>
<p>Click the button to open the dialog. Le bouton ouvre la boîte de dialogue.</p>
<p class="MAC" hidden>Cette phrase est masquée sur les autres plates-formes.</p>
</div></body></html>"""


def test_prose_filter_keeps_ordinary_sentences_in_the_language(tmp_path):
    (tmp_path / "fr" / "text").mkdir(parents=True)
    (tmp_path / "fr" / "text" / "page.html").write_text(PAGE, encoding="utf-8")
    stats: Counter = Counter()
    got = list(libreoffice_help_sentences("fr", stats, root=tmp_path))
    assert got == ["Élément ajouté à la liste.", "Le bouton ouvre la boîte de dialogue."]
    assert stats["rejected: does not start with a capital letter"] == 1
    assert stats["rejected: identifier, URL, menu path or shortcut"] == 2  # menu path, keys
    assert stats["rejected: not in 'fr' (untranslated)"] == 1
    assert list(prose_sentences_any(["«Привет», сказал он."], "ru")) == ["«Привет», сказал он."]


def test_language_test_uses_function_words_and_script():
    assert in_language("Откройте диалоговое окно Параметры.", "ru")
    assert not in_language("Open the Options dialog in LibreOffice.", "ru")
    assert in_language("Seleccione la opción en el menú.", "es")
    assert not in_language("Select the option in the menu.", "es")
    assert in_language("Anything at all.", "en")


def test_missing_help_names_the_debian_package(tmp_path):
    assert help_package("fr") == "libreoffice-help-fr" and help_package("en") == (
        "libreoffice-help-en-us"
    )
    with pytest.raises(SentprobeError, match="apt-get install libreoffice-help-de"):
        libreoffice_help_dir("de", root=tmp_path)


def test_sample_script_fails_clearly_without_the_package(capsys):
    assert build_multilingual_samples.main(["--langs", "xx"]) == 1
    assert "libreoffice-help-xx" in capsys.readouterr().err
