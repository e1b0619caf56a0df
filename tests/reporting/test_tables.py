import json
from io import StringIO

import pandas as pd
import pytest
from rich.console import Console

from sentprobe.errors import SentprobeError
from sentprobe.reporting import pivot, results_table, rich_table


def rec(
    encoder,
    task,
    score,
    seed=0,
    probe="logreg",
    source="paper",
    language="en",
    created="2024-01-01T00:00:00",
):
    return dict(
        encoder=encoder,
        task=task,
        test_score=score,
        seed=seed,
        probe=probe,
        task_source=source,
        language=language,
        created=created,
        category="other",
    )


@pytest.fixture
def frame():
    return pd.DataFrame(
        [
            rec("MiniLM", "CoordInv", 0.6),
            rec("MiniLM", "MyTask", 0.7),
            rec("MiniLM", "SentLen", 0.80, seed=0),
            rec("MiniLM", "SentLen", 0.90, seed=1),
            rec("GloVe", "TreeDepth", 0.30),
            rec("BERT (untrained)", "SentLen", 0.40),
            rec("BoV-GloVe", "WC", 0.75),
            rec("Majority", "SentLen", 0.17, probe="majority"),
            rec("NB-uni-tfidf", "SOMO", 0.5),
        ]
    )


def header_and_rows(markdown: str):
    lines = markdown.strip().splitlines()
    cells = [[c.strip() for c in line.strip("|").split(" | ")] for line in lines]
    return cells[0], cells[2], {row[0]: row[1:] for row in cells[3:]}


def test_pivot_layout_and_order(frame):
    table = pivot(frame)
    assert list(table.columns.get_level_values("task")) == [
        "SentLen",
        "WC",
        "TreeDepth",
        "SOMO",
        "CoordInv",
        "MyTask",
    ]
    assert list(table.columns.get_level_values("group")) == [
        "Surface",
        "Surface",
        "Syntactic",
        "Semantic",
        "Semantic",
        "Other",
    ]
    assert list(table.index) == [
        "Majority",
        "NB-uni-tfidf",
        "BoV-GloVe",
        "BERT (untrained)",
        "MiniLM",
        "GloVe",
    ]
    assert table.loc["MiniLM", ("Surface", "SentLen")] == pytest.approx(85.0)
    assert pivot(frame, stat="n").loc["MiniLM", ("Surface", "SentLen")] == 2
    assert pivot(frame, percent=False).loc["GloVe", ("Syntactic", "TreeDepth")] == 0.3


def test_markdown_groups_mean_std_and_missing(frame):
    header, tasks, rows = header_and_rows(results_table(frame, fmt="markdown"))
    assert header[1:] == ["Surface", "", "Syntactic", "Semantic", "", "Other"]
    assert tasks[0] == "**Encoder**" and tasks[1] == "**SentLen**"
    assert rows["MiniLM"][0] == "85.0 ± 7.1"
    assert rows["MiniLM"][4] == "60.0" and rows["GloVe"][0] == "-"
    assert list(rows)[:3] == ["Majority", "NB-uni-tfidf", "BoV-GloVe"]
    assert results_table(frame, decimals=2).count("85.00 ± 7.07") == 1


def test_latest_record_wins(frame):
    newer = rec("GloVe", "TreeDepth", 0.35, created="2025-01-01T00:00:00")
    older = rec("GloVe", "TreeDepth", 0.99, created="2023-01-01T00:00:00")
    table = pivot(pd.concat([frame, pd.DataFrame([newer, older])], ignore_index=True))
    assert table.loc["GloVe", ("Syntactic", "TreeDepth")] == pytest.approx(35.0)


def test_two_probes_label_rows_and_sources_stay_apart(frame):
    extra = pd.DataFrame(
        [
            rec("MiniLM", "SentLen", 0.5, probe="mlp"),
            rec("MiniLM", "SentLen", 0.6, language="de", source="xprobe"),
            rec("GloVe", "BShift", 0.52, source="mine"),
            rec("GloVe", "BShift", 0.58, source="theirs"),
        ]
    )
    table = pivot(pd.concat([frame, extra], ignore_index=True))
    assert {"MiniLM [logreg]", "MiniLM [mlp]", "GloVe"} <= set(table.index)
    tasks = list(table.columns.get_level_values("task"))
    assert tasks[:3] == ["SentLen (en)", "SentLen (de)", "WC"]
    assert {"BShift [mine]", "BShift [theirs]"} <= set(tasks)
    assert table.loc["MiniLM [mlp]", ("Surface", "SentLen (en)")] == pytest.approx(50.0)


def test_csv_has_mean_and_std_columns(frame):
    csv = pd.read_csv(StringIO(results_table(frame, fmt="csv")))
    assert list(csv.columns[:5]) == ["encoder", "SentLen", "SentLen std", "WC", "WC std"]
    minilm = csv.set_index("encoder").loc["MiniLM"]
    assert minilm["SentLen"] == 85.0 and minilm["SentLen std"] == 50 * 2**0.5 / 10  # unrounded
    assert pd.isna(minilm["WC"])


def test_json_is_a_list_of_records(frame):
    records = json.loads(results_table(frame, fmt="json"))
    assert [r["encoder"] for r in records][0] == "Majority"
    minilm = next(r for r in records if r["encoder"] == "MiniLM")
    assert minilm["SentLen"] == 85.0 and minilm["WC"] is None
    assert minilm["SentLen std"] == pytest.approx(50 * 2**0.5 / 10, rel=1e-12)  # unrounded


def test_single_seed_has_no_std_columns(frame):
    one_seed = frame[frame["seed"] == 0]
    assert "std" not in results_table(one_seed, fmt="csv").splitlines()[0]
    assert "±" not in results_table(one_seed)


def test_latex_booktabs_with_group_row(frame):
    tex = results_table(
        frame.assign(encoder=frame["encoder"].replace("GloVe", "GloVe_42%")), fmt="latex"
    )
    assert r"\multicolumn{2}{c}{Surface}" in tex and r"\cmidrule(lr){2-3}" in tex
    assert r"85.0 $\pm$ 7.1" in tex and r"GloVe\_42\%" in tex
    assert tex.startswith(r"\begin{tabular}{lrrrrrr}") and r"\bottomrule" in tex


def test_rich_table(frame):
    table = rich_table(frame.assign(encoder=frame["encoder"].replace("GloVe", "GloVe [x]")))
    console = Console(file=StringIO(), width=200)
    console.print(table)
    text = console.file.getvalue()
    assert "Surface" in text and "85.0 ± 7.1" in text
    assert "GloVe [x]" in text  # brackets are not eaten as rich markup
    assert len(table.columns) == 7


def test_bad_input_is_a_clear_error(frame):
    with pytest.raises(SentprobeError, match="no results"):
        results_table(frame.iloc[0:0])
    with pytest.raises(SentprobeError, match="format"):
        results_table(frame, fmt="html")
    with pytest.raises(SentprobeError, match="missing column.*test_score"):
        results_table(frame.drop(columns="test_score"))


def test_rows_on_older_task_data_are_marked():
    """Two versions of one task's data must not sit side by side unmarked."""
    frame = pd.DataFrame(
        [
            {**rec("GloVe", "SentLen", 0.5, created="2024-01-01"), "task_hash": "old"},
            {**rec("GloVe", "WC", 0.6, created="2024-01-01"), "task_hash": "wc"},
            {**rec("MiniLM", "SentLen", 0.8, created="2024-02-01"), "task_hash": "new"},
            {**rec("MiniLM", "WC", 0.7, created="2024-02-01"), "task_hash": "wc"},
        ]
    )
    text = results_table(frame)
    _, _, rows = header_and_rows(text.split("\n\n")[0])
    assert rows["GloVe"] == ["50.0‡", "60.0"] and rows["MiniLM"] == ["80.0", "70.0"]
    assert "‡ computed on an older version of this task's data" in text
    assert "older task data" in results_table(frame, fmt="csv")
    assert r"\textsuperscript{$\ddag$}" in results_table(frame, fmt="latex")
    same = frame.assign(task_hash="same")
    assert "‡" not in results_table(same) and "notes" not in results_table(same, fmt="csv")


def test_unresolved_hub_revision_is_marked():
    frame = pd.DataFrame(
        [
            {**rec("bert", "SentLen", 0.8), "encoder_fingerprint": "hf|hub:bert@main:unresolved|x"},
            {**rec("MiniLM", "SentLen", 0.7), "encoder_fingerprint": "st|dir:0123|x"},
        ]
    )
    text = results_table(frame)
    _, _, rows = header_and_rows(text.split("\n\n")[0])
    assert set(rows) == {"bert†", "MiniLM"}
    assert "† hub revision unresolved" in text
    records = json.loads(results_table(frame, fmt="json"))
    assert records[0]["encoder"] == "bert†" and records[0]["notes"] == "hub revision unresolved"
    console = Console(file=StringIO(), width=200)
    console.print(rich_table(frame))
    assert "hub revision unresolved" in " ".join(console.file.getvalue().split())


def test_cells_no_seed_can_change_say_so_instead_of_zero_std():
    def unit(encoder, score, seed, seeded, probe="logreg"):
        return {
            **rec(encoder, "SentLen", score, seed=seed, probe=probe),
            "extra": {"seeded": seeded, "seeds": 3},
        }

    frame = pd.DataFrame(
        [
            unit("Majority", 0.17, 0, False, probe="MajorityProbe"),  # computed once
            *(unit("MiniLM", 0.8 + s / 100, s, True) for s in range(3)),
        ]
    )
    text = results_table(frame)
    _, _, rows = header_and_rows(text.split("\n\n")[0])
    assert rows == {"Majority": ["17.0°"], "MiniLM": ["81.0 ± 1.0"]}
    assert "° nothing here depends on the seed" in text
    one_seed = frame[frame["seed"] == 0].assign(extra=[{"seeded": False, "seeds": 1}] * 2)
    assert "°" not in results_table(one_seed)  # one seed asked for: nothing to explain


def test_seedless_cells_show_no_seed_spread_and_the_legend_says_what_a_fold_spread_is():
    """° says there is no ± over seeds: a deterministic unit stored once per seed shows no
    "± 0.0", and where a cross-validated cell shows its spread over folds (§), the ° note
    says so instead of claiming no ± is shown (kim2019: "50.0 ± 0.0 (±4.1)°§")."""
    extra = {"seeded": False, "seeds": 3}
    folds = {**extra, "fold_scores": [0.5] * 10}
    frame = pd.DataFrame(
        [
            *({**rec("Majority", "SentLen", 0.17, seed=s), "extra": extra} for s in range(3)),
            {**rec("Majority", "EOS", 0.5), "extra": folds},
            *({**rec("MiniLM", "SentLen", 0.8, seed=s), "extra": {"seeds": 3}} for s in range(3)),
        ]
    )
    text = results_table(frame)
    _, _, rows = header_and_rows(text.split("\n\n")[0])
    assert rows["Majority"] == ["17.0°", "50.0 ± 0.0°§"]
    legend = next(line for line in text.splitlines() if line.startswith("° "))
    assert "no ± over seeds" in legend and "§" in legend
    shown = [c for cells in rows.values() for c in cells if "°" in c and " ± " in c]
    assert all("§" in c for c in shown)  # a ± on a ° cell is always a fold spread
