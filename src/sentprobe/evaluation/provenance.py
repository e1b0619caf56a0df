"""Which code and environment computed a result: sentprobe's version and source, the
libraries' versions, threads, BLAS and platform.

Every record the results store writes carries them in ``extra["versions"]`` and
``extra["environment"]`` (from the command line and from Python alike; a record copied from
another store keeps its own). A result is *foreign* when another sentprobe version or other
sentprobe source code made it, or when the major.minor version of a library that decides
scores differs (:data:`DECISIVE`): ``run`` computes it again (unless told to keep it) and
``report`` flags it. Versions are read from the installed packages' metadata, without importing
them; the source is hashed, so an uncommitted edit of a checkout counts as other code.
"""

from __future__ import annotations

import hashlib
import os
import platform
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from sentprobe import __version__
from sentprobe.parallel import thread_budget

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
    "tokenizers",
    "huggingface-hub",
    "datasets",
    "mteb",
)
#: Libraries whose major.minor version, when it differs from the one installed, makes a stored
#: result foreign (a new minor release may change solvers, kernels or tokenization).
DECISIVE = ("numpy", "scikit-learn", "torch", "transformers", "sentence-transformers")
#: The key of the source hash in ``extra["versions"]``.
CODE = "sentprobe-code"


@cache
def source_hash() -> str:
    """SHA-256 (16 hex digits) of sentprobe's own source files, paths and bytes: changes with
    every edit of the code, committed or not, where the version number does not."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@cache
def package_versions() -> dict[str, str]:
    """The installed versions of :data:`LIBRARIES` (those installed), sentprobe's source hash
    and Python's."""
    found = {"sentprobe": __version__, CODE: source_hash()}
    for name in LIBRARIES[1:]:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    found["python"] = platform.python_version()
    return found


@cache
def environment() -> dict[str, Any]:
    """What else can change a score on one machine: the threads sentprobe computes with, the
    BLAS numpy calls (threadpoolctl's report) and the platform."""
    import numpy  # noqa: F401  (threadpoolctl reports only the libraries already loaded)
    from threadpoolctl import threadpool_info  # type: ignore[import-untyped]

    blas = [
        {k: info.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
        for info in threadpool_info()
        if info.get("user_api") == "blas"
    ]
    return {
        "threads": thread_budget(),
        "cpus": os.cpu_count(),
        "blas": blas,
        "platform": platform.platform(),
        "machine": platform.machine(),
    }


def made_by(extra: dict[str, Any] | None) -> str | None:
    """The sentprobe version a record's ``extra`` names (None: not recorded, i.e. older)."""
    versions = (extra or {}).get("versions")
    return versions.get("sentprobe") if isinstance(versions, dict) else None


def _minor(version: object) -> tuple[str, ...]:
    return tuple(str(version).split("+")[0].split(".")[:2])


def foreign_reason(extra: dict[str, Any] | None) -> str | None:
    """Why a record is not this installation's result (None: it is): ``sentprobe 0.0.1``,
    ``other sentprobe code``, ``torch 1.13.1``, ... joined by commas."""
    versions = (extra or {}).get("versions")
    if not isinstance(versions, dict) or "sentprobe" not in versions:
        return "an older sentprobe (no version)"
    here = package_versions()
    reasons = []
    if versions["sentprobe"] != __version__:
        reasons.append(f"sentprobe {versions['sentprobe']}")
    elif versions.get(CODE, here[CODE]) != here[CODE]:
        reasons.append(f"other sentprobe code ({versions[CODE]})")
    for name in DECISIVE:
        if name in versions and name in here and _minor(versions[name]) != _minor(here[name]):
            reasons.append(f"{name} {versions[name]}")
    return ", ".join(reasons) or None


def is_foreign(extra: dict[str, Any] | None) -> bool:
    """Made by another sentprobe version or code, or a decisive library's other major.minor."""
    return foreign_reason(extra) is not None


def versions_line(extra: dict[str, Any] | None) -> str:
    """``sentprobe 0.1.0, numpy 2.1.3, ... (python 3.12.3)``, or why there is none."""
    versions = dict((extra or {}).get("versions") or {})
    if not versions:
        return "versions not recorded (stored by an older sentprobe)"
    python = versions.pop("python", None)
    names = sorted(versions, key=lambda name: (name not in ("sentprobe", CODE), name))
    text = ", ".join(f"{name} {versions[name]}" for name in names)
    return text + (f" (python {python})" if python else "")
