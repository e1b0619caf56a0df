"""The report's figures: grey non-significant cells, SVG fit for inlining, file writing,
relative heatmaps and layer curves from small frames."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from sentprobe.errors import SentprobeError
from sentprobe.reporting.plots import (
    correlation_figure,
    figure_svg,
    layer_curves_figure,
    relative_rows_figure,
    save_figure,
)


def _rho():
    rho = pd.DataFrame([[0.9, -0.2], [np.nan, 0.5]], index=["WC", "SentLen"], columns=["A", "B"])
    significant = pd.DataFrame(
        [[True, False], [False, False]], index=rho.index, columns=rho.columns
    )
    return rho, significant


def test_correlation_colours_only_significant_cells():
    rho, significant = _rho()
    fig = correlation_figure(rho, significant, "title (n = 6)")
    ax = fig.axes[0]
    coloured, grey = ax.images[0].get_array(), ax.images[1].get_array()
    assert not coloured.mask[0, 0] and coloured.mask[0, 1] and coloured.mask[1, 1]
    assert not grey.mask[0, 1] and not grey.mask[1, 1]  # grey where not significant
    assert grey.mask[0, 0] and grey.mask[1, 0]  # neither on the significant nor the missing cell
    texts = [t.get_text() for t in ax.texts]
    assert "+0.90" in texts and "–" in texts
    assert "n = 6" in ax.get_title()


def test_svg_is_inline_ready_and_salted():
    rho, significant = _rho()
    fig = correlation_figure(rho, significant, "t")
    a, b = figure_svg(fig, "one"), figure_svg(fig, "two")
    assert a.startswith("<svg") and "<metadata>" not in a and "<?xml" not in a
    assert "<text" in a and "+0.90" in a  # text stays text
    ids_a, ids_b = set(re.findall(r'id="([^"]+)"', a)), set(re.findall(r'id="([^"]+)"', b))
    assert ids_a and not ids_a & ids_b


def test_save_figure_by_extension(tmp_path):
    rho, significant = _rho()
    fig = correlation_figure(rho, significant, "t")
    assert save_figure(fig, tmp_path / "a" / "c.svg").read_text().lstrip().startswith("<?xml")
    assert save_figure(fig, tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(SentprobeError, match="unknown image format"):
        save_figure(fig, tmp_path / "c.gif")
    assert not (tmp_path / "c.gif").exists()


def test_relative_rows_against_a_reference():
    wide = pd.DataFrame({"WC": [1.0, 60.0], "SentLen": [20.0, 15.0]}, index=["Majority", "enc"])
    fig = relative_rows_figure(wide, "Majority")
    assert sorted(t.get_text() for t in fig.axes[0].texts) == ["+59.0", "-5.0"]
    with pytest.raises(SentprobeError, match="no row 'Human'"):
        relative_rows_figure(wide, "Human")


def test_layer_curves_mark_peak_and_band():
    curves = pd.DataFrame(
        {
            "model": "m",
            "task": ["T"] * 3,
            "layer": [0, 1, 2],
            "score": [50.0, 70.0, 60.0],
            "low": [45.0, 65.0, 55.0],
            "high": [55.0, 75.0, 65.0],
        }
    )
    fig = layer_curves_figure(curves, {("m", "T"): 1}, {("m", "T"): 0.8}, {"T": 50.0})
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["L1"]
    assert len(ax.collections) == 1  # the CI band
    assert "band: 95% CI" in fig._suptitle.get_text()
