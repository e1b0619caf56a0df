"""Progress bars off a terminal: whole lines, a few seconds apart, no carriage returns."""

from __future__ import annotations

import io

from sentprobe.progress import tqdm


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_file_gets_whole_lines_not_frames(monkeypatch):
    monkeypatch.setenv("SENTPROBE_PROGRESS_SECONDS", "3600")
    out = io.StringIO()
    for _ in tqdm(range(5000), desc="encoding", file=out):
        pass
    text = out.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    # the start and the end, nothing between them within the interval
    assert lines == ["encoding: 0/5000 [00:00<?]", lines[-1]]
    assert lines[-1].startswith("encoding: 5000/5000 [")


def test_a_terminal_still_gets_the_redrawn_bar():
    out = _Tty()
    for _ in tqdm(range(50), desc="encoding", file=out, mininterval=0):
        pass
    assert out.getvalue().count("\r") > 10


def test_a_disabled_bar_writes_nothing():
    out = io.StringIO()
    for _ in tqdm(range(5), file=out, disable=True):
        pass
    assert out.getvalue() == ""
