"""Correlation of probing with downstream scores: Spearman and its p-value against scipy,
Holm on a hand-checked example, the downstream readers (CSV errors, MTEB results), the
matching of encoders and languages, the table and the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sentprobe.analysis.correlation import (
    correlate,
    correlation_matrix,
    correlation_table,
    read_downstream,
    spearman,
)
from sentprobe.analysis.stats import holm
from sentprobe.errors import DataError, SentprobeError

X = [61.0, 70.5, 55.2, 80.1, 66.0, 72.3, 59.9, 75.0]
Y = [0.41, 0.52, 0.40, 0.61, 0.45, 0.50, 0.47, 0.58]


def test_spearman_matches_scipy_rho_and_its_exact_permutation_p():
    rho, p = spearman(X, Y)
    assert rho == pytest.approx(stats.spearmanr(X, Y).statistic)
    # the exact p: all 8! pairings, as scipy's permutation test enumerates them
    ry = stats.rankdata(Y) - 4.5

    def rho_of(a, axis=-1):
        ra = stats.rankdata(a, axis=axis) - 4.5
        return (ra @ ry) / np.sqrt((ra * ra).sum(axis=-1) * (ry @ ry))

    exact = stats.permutation_test(
        (X,), rho_of, permutation_type="pairings", vectorized=True, n_resamples=np.inf
    ).pvalue
    assert p == pytest.approx(exact)
    assert p != pytest.approx(stats.spearmanr(X, Y).pvalue)  # not the t approximation


def test_spearman_beyond_nine_points_is_scipys():
    rng = np.random.default_rng(0)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    rho, p = spearman(x, y)
    ref = stats.spearmanr(x, y)
    assert (rho, p) == pytest.approx((ref.statistic, ref.pvalue))


def test_spearman_hand_example():
    # ranks 1..5 against 2,1,4,3,5: sum d^2 = 4, rho = 1 - 6*4/(5*24) = 0.8. Of the 120
    # pairings, 8 have sum d^2 <= 4 (the identity, 4 adjacent swaps, 3 pairs of disjoint
    # adjacent swaps) and their 8 reversals have rho <= -0.8: p = 16/120
    rho, p = spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    assert rho == pytest.approx(0.8)
    assert p == pytest.approx(16 / 120)


def test_spearman_constant_side_is_nan():
    assert all(math.isnan(v) for v in spearman([1, 2, 3], [4, 4, 4]))


def test_holm_hand_checked():
    # sorted 0.01, 0.02, 0.03, 0.04 times 4, 3, 2, 1 = 0.04, 0.06, 0.06, 0.04; running max
    # keeps the order: 0.04, 0.06, 0.06, 0.06
    p = np.array([0.03, 0.01, 0.04, 0.02])
    assert holm(p) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    # 0.2 * 2 = 0.4, then max(0.4, 0.9 * 1) = 0.9; 0.5 * 2 = 1.0 caps the larger one too
    assert holm(np.array([0.2, 0.9])) == pytest.approx([0.4, 0.9])
    assert holm(np.array([0.5, 0.9])) == pytest.approx([1.0, 1.0])


def _probing(encoders, tasks, languages=("en",), seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        [
            {"encoder": e, "task": t, "language": lang, "score": float(rng.uniform(40, 90))}
            for e in encoders
            for t in tasks
            for lang in languages
        ]
    )


def test_correlate_one_cell_per_task_pair_with_holm():
    encoders = [f"enc{i}" for i in range(6)]
    probing = _probing(encoders, ["WC", "SentLen"])
    wc = probing[probing["task"] == "WC"].set_index("encoder")["score"]
    down = pd.DataFrame(
        {
            "encoder": encoders * 2,
            "task": ["STS"] * 6 + ["TREC"] * 6,
            "language": "",
            "score": [*(wc[e] / 100 for e in encoders), *range(6)],
        }
    )
    cells = correlate(probing, down)
    assert len(cells) == 4 and set(cells["n"]) == {6}
    wc_sts = cells[(cells["probing_task"] == "WC") & (cells["downstream_task"] == "STS")].iloc[0]
    assert wc_sts["rho"] == pytest.approx(1.0)
    assert wc_sts["p"] == pytest.approx(2 / math.factorial(6))  # the two perfect pairings
    assert cells["p_holm"].to_numpy() == pytest.approx(holm(cells["p"].to_numpy()))
    assert bool(wc_sts["significant"])
    matrix = correlation_matrix(cells)
    assert list(matrix.index) == ["WC", "SentLen"] and list(matrix.columns) == ["STS", "TREC"]


def test_correlate_matches_languages_as_xprobe():
    encoders = [f"enc{i}" for i in range(5)]
    probing = _probing(encoders, ["Tense"], languages=("fr", "es"))
    down = pd.DataFrame(
        {
            "encoder": encoders * 2,
            "task": "XNLI",
            "language": ["fr"] * 5 + ["es"] * 5,
            "score": range(10),
        }
    )
    cells = correlate(probing, down)
    assert sorted(zip(cells["probing_language"], cells["downstream_language"])) == [
        ("es", "es"),
        ("fr", "fr"),
    ]
    assert list(correlation_matrix(cells).columns) == ["XNLI (fr)", "XNLI (es)"]


def test_too_few_shared_encoders_says_so():
    probing = _probing(["a", "b", "c"], ["WC"])
    down = pd.DataFrame({"encoder": ["a", "b", "x"], "task": "STS", "language": "", "score": 1.0})
    with pytest.raises(SentprobeError, match=r"only 2 encoder\(s\).*at least 3.*x"):
        correlate(probing, down)


def test_table_formats():
    encoders = [f"enc{i}" for i in range(4)]
    probing = _probing(encoders, ["WC"])
    down = pd.DataFrame({"encoder": encoders, "task": "STS", "language": "", "score": range(4)})
    cells = correlate(probing, down)
    md = correlation_table(cells, "markdown")
    assert "| WC" in md and "n = 4" in md and "Holm" in md
    records = json.loads(correlation_table(cells, "json"))
    assert records[0]["n"] == 4 and isinstance(records[0]["significant"], bool)
    assert correlation_table(cells, "csv").startswith("probing_task,")
    assert r"\begin{tabular}" in correlation_table(cells, "latex")


# ---------------------------------------------------------------------------- readers


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("model,task,score\n", 1, "header must name encoder, task and score"),
        ("encoder,task,score\na,STS,0.5\nb,STS\n", 3, "2 fields, the header has 3"),
        ("encoder,task,score\na,STS,high\n", 2, "not a finite number"),
        ("encoder,task,score\na,STS,nan\n", 2, "not a finite number"),
        ("encoder,task,score\n,STS,0.5\n", 2, "empty encoder"),
    ],
)
def test_csv_errors_name_file_and_line(tmp_path, text, line, problem):
    path = tmp_path / "down.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=problem) as info:
        read_downstream(path)
    assert info.value.line == line and info.value.path == str(path)


def test_csv_duplicate_names_both_lines(tmp_path):
    path = tmp_path / "down.csv"
    path.write_text("encoder,task,score\na,STS,0.5\nb,STS,0.6\na,STS,0.7\n")
    with pytest.raises(SentprobeError, match="line 2 and .*line 4"):
        read_downstream(path)


def test_csv_with_language_and_rename(tmp_path):
    path = tmp_path / "down.csv"
    path.write_text("# scores\nencoder,task,score,language\nm1,XNLI,0.7,fr\nm2,XNLI,0.6,fr\n")
    frame = read_downstream(path, rename={"m1": "MiniLM"})
    assert list(frame["encoder"]) == ["MiniLM", "m2"] and set(frame["language"]) == {"fr"}


def _mteb(directory, model, task, scores, meta=True):
    folder = directory / model.replace("/", "__") / ("a" * 40)
    folder.mkdir(parents=True, exist_ok=True)
    if meta:
        (folder / "model_meta.json").write_text(json.dumps({"name": model}))
    (folder / f"{task}.json").write_text(json.dumps({"task_name": task, "scores": scores}))


def test_mteb_results_directory(tmp_path):
    _mteb(
        tmp_path, "org/m1", "STSBenchmark", {"test": [{"main_score": 0.8, "hf_subset": "default"}]}
    )
    _mteb(
        tmp_path,
        "org/m2",
        "XNLI",
        {"test": [{"main_score": 0.6, "hf_subset": "fr"}, {"main_score": None, "hf_subset": "es"}]},
        meta=False,  # the model's name comes from its folder
    )
    _mteb(tmp_path, "org/m3", "MSMARCO", {"dev": [{"main_score": 0.3, "hf_subset": "default"}]})
    frame = read_downstream(tmp_path).sort_values("encoder")
    assert list(frame["encoder"]) == ["org/m1", "org/m2", "org/m3"]
    assert list(frame["language"]) == ["", "fr", ""]
    assert list(frame["score"]) == [0.8, 0.6, 0.3]


def test_mteb_old_format_and_errors(tmp_path):
    old = tmp_path / "m" / "SICK-R.json"
    old.parent.mkdir()
    old.write_text(json.dumps({"mteb_dataset_name": "SICK-R", "test": {"main_score": 0.7}}))
    assert read_downstream(old)["task"].tolist() == ["SICK-R"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"scores": {"test": [}')
    with pytest.raises(DataError, match="not valid JSON") as info:
        read_downstream(bad)
    assert info.value.line == 1
    with pytest.raises(DataError, match="no train split"):
        read_downstream(old, split="train")


def test_control_tasks_are_not_probing_tasks(tmp_path, make_record):
    """A store with ``T~control`` records: one probing row per real task, and the Holm family
    is the real tasks' cells only (the controls would double it)."""
    from sentprobe.analysis.correlation import correlation_cells

    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        [
            {"key": f"{e}|{t}", **make_record(e, t, float(rng.uniform(0.4, 0.9))).__dict__}
            for e in [f"enc{i}" for i in range(5)]
            for t in ("WC", "Tense", "WC~control", "Tense~control")
        ]
    )
    down = tmp_path / "down.csv"
    down.write_text("encoder,task,score\n" + "".join(f"enc{i},STS,{i}\n" for i in range(5)))
    cells = correlation_cells(frame, down)
    assert sorted(cells["probing_task"]) == ["Tense", "WC"]
    real = cells["p"].to_numpy()
    assert cells["p_holm"].to_numpy() == pytest.approx(holm(real))  # a family of 2, not 4


def test_heatmap_title_fits_a_one_column_matrix():
    """The n-encoders title of a narrow heatmap used to run past both edges of the figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from sentprobe.reporting.plots import correlation_figure

    for columns in (1, 2, 6):
        rho = pd.DataFrame({f"STS{i}": [0.9, -0.2] for i in range(columns)}, index=["WC", "Tense"])
        title = "Spearman ρ, probing vs downstream, across encoders (n = 4-6)"
        fig = correlation_figure(rho, rho > 0.5, title)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        box = fig.axes[0].title.get_window_extent(canvas.get_renderer())
        assert box.x0 >= 0 and box.x1 <= fig.bbox.width, (columns, box)
        assert box.y0 >= 0 and box.y1 <= fig.bbox.height, (columns, box)
        assert "(n = 4-6)" in fig.axes[0].get_title().splitlines()[-1]  # kept on one line
