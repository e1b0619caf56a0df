"""Issue 46: a ``file.py:fn`` encoder is fingerprinted by its module's source, so changing a
module constant the function uses (``D = 64`` -> ``32``) gives another row and other cached
vectors; a declared ``__version__`` is part of the fingerprint too."""

from __future__ import annotations

import linecache

from sentprobe.encoders import get_encoder

MODULE = """
import numpy as np

D = {d}
{version}

def encode(sentences):
    return np.ones((len(sentences), D), dtype=np.float32)
"""


def _fingerprint(path, d: int, version: str = "") -> str:
    path.write_text(MODULE.format(d=d, version=version))
    linecache.checkcache()  # the file changed on disk since it was last read
    return get_encoder(f"{path}:encode").fingerprint


def test_a_module_constant_changes_the_fingerprint(tmp_path):
    path = tmp_path / "enc.py"
    first = _fingerprint(path, 64)
    assert _fingerprint(path, 64) == first  # stable
    assert _fingerprint(path, 32) != first  # the function's body is the same


def test_a_declared_version_changes_the_fingerprint(tmp_path):
    path = tmp_path / "enc.py"
    one = _fingerprint(path, 8, "__version__ = '1'")
    assert _fingerprint(path, 8, "__version__ = '2'") != one
