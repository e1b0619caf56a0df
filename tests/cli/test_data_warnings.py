"""`sentprobe run`'s data warnings name the task's language and source: three X-Probe
languages' "Tense: train split is imbalanced" used to read alike."""

from __future__ import annotations

import pandas as pd

from sentprobe.cli.console import show_warnings as _show_warnings
from sentprobe.cli.console import task_label


def test_warnings_of_one_task_in_several_languages_can_be_told_apart(capsys):
    imbalanced = "train split is imbalanced: largest class 'PAST' has 730 examples"
    frame = pd.DataFrame(
        {
            "task": ["Tense"] * 4,
            "language": ["de", "es", "ru", "ru"],
            "task_source": ["de", "es", "ru", "ru"],  # X-Probe: the language folder
            "warnings": [[imbalanced]] * 4,  # ru twice: two rows, one warning
        }
    )
    _show_warnings(frame)
    lines = capsys.readouterr().err.strip().splitlines()
    assert [line.split(":", 2)[1].strip() for line in lines] == [
        "Tense (de)",
        "Tense (es)",
        "Tense (ru)",
    ]
    assert task_label("Tense", "fr", "sample-fr") == "Tense (fr, sample-fr)"
    assert task_label("SentLen", "und", "") == "SentLen"
