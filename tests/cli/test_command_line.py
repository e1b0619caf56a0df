"""The command line's shape: ``-v`` after any command, one output per ``report`` call."""

from __future__ import annotations

import logging

import pytest
import typer
from typer.testing import CliRunner

from sentprobe.cli.main import app, setup_logging


def _command_paths(group, prefix=()):
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _command_paths(command, (*prefix, name))
        else:
            yield (*prefix, name)


COMMANDS = sorted(_command_paths(typer.main.get_command(app)))


@pytest.fixture
def quiet_after():
    yield
    setup_logging(0)


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_takes_verbose_after_its_name(path):
    # --help stops before the command runs; an unknown -v would fail while parsing, first
    result = CliRunner().invoke(app, [*path, "-v", "--help"])
    assert result.exit_code == 0, result.output
    assert "-v, --verbose" in result.output


def test_verbose_after_the_command_adds_to_verbose_before_it(quiet_after):
    logger = logging.getLogger("sentprobe")
    assert CliRunner().invoke(app, ["tasks", "-v"]).exit_code == 0
    assert logger.level == logging.INFO
    assert CliRunner().invoke(app, ["-v", "tasks", "-v"]).exit_code == 0
    assert logger.level == logging.DEBUG


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--agreement", "--provenance"], "--provenance and --agreement"),
        (["--by", "subtype", "--layers"], "--by and --layers"),
        (["--html", "r.html", "--curves", "c.png"], "--curves and --html"),
        (["--layer-curves", "l.png", "--agreement"], "--agreement and --layer-curves"),
        (["--erasure", "--layers"], "--layers and --erasure"),
    ],
)
def test_report_modes_that_conflict_are_one_usage_error(tmp_path, flags, named):
    result = CliRunner().invoke(app, ["report", "--results", str(tmp_path / "none"), *flags])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1, result.output
    assert f"error: report: {named} are different outputs" in result.output


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--by-task"], "--by-task belongs to --agreement"),
        (["--downstream", "d.csv"], "--downstream belongs to --html"),
        (["--html", "r.html", "--rename", "a=b"], "--rename belongs to --downstream"),
        (["--reference-row", "Majority"], "--reference-row belongs to --html"),
        (["--reference-language", "fr"], "--reference-language belongs to --html"),
        (["--runs", "other/*"], "--runs belongs to --curves"),
    ],
)
def test_an_option_of_one_mode_without_that_mode_is_a_usage_error(tmp_path, flags, named):
    result = CliRunner().invoke(app, ["report", "--results", str(tmp_path / "none"), *flags])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1, result.output
    assert f"error: report: {named}" in result.output


def test_html_and_layer_curves_are_one_mode(tmp_path):
    result = CliRunner().invoke(
        app, ["report", "--results", str(tmp_path / "none"), "--html", "r.html"]
        + ["--layer-curves", "l.png"]
    )  # fmt: skip
    assert result.exit_code == 1 and "no results store here" in result.output


def test_report_compare_points_to_the_compare_command(tmp_path):
    result = CliRunner().invoke(app, ["report", "--compare", "Good,Bad"])
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "sentprobe compare Good Bad" in result.output
    assert "--compare" not in CliRunner().invoke(app, ["report", "--help"]).output
