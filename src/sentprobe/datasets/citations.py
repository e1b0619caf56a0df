# ruff: noqa: E501  (BibTeX entries are kept as the Anthology gives them, one field a line)
"""BibTeX of the papers whose tasks sentprobe reads or rebuilds, for dataset cards and MTEB
(both ask for BibTeX; a task's ``TaskMetadata.citation`` is the plain text shown in reports)."""

from __future__ import annotations

import re

#: A word of the plain-text citation -> the paper's BibTeX (ACL Anthology entries).
BIBTEX = {
    "Conneau": r"""@inproceedings{conneau-etal-2018-cram,
    title = "What you can cram into a single {\$}{\&}!{\#}* vector: Probing sentence embeddings for linguistic properties",
    author = "Conneau, Alexis and Kruszewski, German and Lample, Guillaume and Barrault, Lo{\"\i}c and Baroni, Marco",
    booktitle = "Proceedings of the 56th Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)",
    year = "2018",
    address = "Melbourne, Australia",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/P18-1198",
    pages = "2126--2136",
}""",
    "Ravishankar": r"""@inproceedings{ravishankar-etal-2019-probing,
    title = "Probing Multilingual Sentence Representations With {X}-Probe",
    author = "Ravishankar, Vinit and {\O}vrelid, Lilja and Velldal, Erik",
    booktitle = "Proceedings of the 4th Workshop on Representation Learning for NLP (RepL4NLP-2019)",
    year = "2019",
    address = "Florence, Italy",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/W19-4318",
    pages = "156--168",
}""",
    "Kim": r"""@inproceedings{kim-etal-2019-probing,
    title = "Probing What Different {NLP} Tasks Teach Machines about Function Word Comprehension",
    author = "Kim, Najoung and Patel, Roma and Poliak, Adam and Xia, Patrick and Wang, Alex and McCoy, Tom and Tenney, Ian and Ross, Alexis and Linzen, Tal and Van Durme, Benjamin and Bowman, Samuel R. and Pavlick, Ellie",
    booktitle = "Proceedings of the Eighth Joint Conference on Lexical and Computational Semantics (*{SEM} 2019)",
    year = "2019",
    address = "Minneapolis, Minnesota",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/S19-1026",
    pages = "235--249",
}""",
}


def bibtex(citation: str) -> str:
    """The BibTeX of the known papers a plain-text citation names (by first author, in the
    order named), else one ``@misc`` entry holding the text; "" for no citation."""
    if not citation.strip():
        return ""
    named = sorted((m.start(), key) for key in BIBTEX if (m := re.search(rf"\b{key}\b", citation)))
    if named:
        return "\n\n".join(BIBTEX[key] for _, key in named)
    text = citation.replace("{", "(").replace("}", ")").replace('"', "''")
    return f'@misc{{sentprobe-task,\n    note = "{text}",\n}}'
