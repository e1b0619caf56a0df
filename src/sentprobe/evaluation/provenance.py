"""Which versions computed a result: sentprobe's and the libraries' that change scores.

Every record the results store writes carries them in ``extra["versions"]`` (from the command
line and from Python alike; a record copied from another store keeps its own). A result made
by another sentprobe version is not reused by ``run`` (it is computed again) and is flagged by
``report``; versions are read from the installed packages' metadata, without importing them.
"""

from __future__ import annotations

import platform
from functools import cache
from importlib import metadata
from typing import Any

from sentprobe import __version__

#: The packages whose versions a result records (those that change scores or encodings).
LIBRARIES = (
    "sentprobe",
    "numpy",
    "scipy",
    "scikit-learn",
    "pandas",
    "torch",
    "transformers",
    "sentence-transformers",
)


@cache
def package_versions() -> dict[str, str]:
    """The installed versions of :data:`LIBRARIES` (those installed) and of Python."""
    found = {"sentprobe": __version__}
    for name in LIBRARIES[1:]:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    found["python"] = platform.python_version()
    return found


def made_by(extra: dict[str, Any] | None) -> str | None:
    """The sentprobe version a record's ``extra`` names (None: not recorded, i.e. older)."""
    versions = (extra or {}).get("versions")
    return versions.get("sentprobe") if isinstance(versions, dict) else None


def is_foreign(extra: dict[str, Any] | None) -> bool:
    """Made by another sentprobe version than this one, or by one that did not record it."""
    return made_by(extra) != __version__


def versions_line(extra: dict[str, Any] | None) -> str:
    """``sentprobe 0.1.0, numpy 2.1.3, ... (python 3.12.3)``, or why there is none."""
    versions = dict((extra or {}).get("versions") or {})
    if not versions:
        return "versions not recorded (stored by an older sentprobe)"
    python = versions.pop("python", None)
    names = sorted(versions, key=lambda name: (name != "sentprobe", name))
    text = ", ".join(f"{name} {versions[name]}" for name in names)
    return text + (f" (python {python})" if python else "")
