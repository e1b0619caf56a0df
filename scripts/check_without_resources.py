"""Run the test suite as a machine without the optional system resources would.

Hidden: WordNet (``WNSEARCHDIR`` points at an empty folder), Chromium (off ``PATH``), the
shared data (the tests run in a copy of the working tree with no ``../shared`` beside it) and
any GPU (``CUDA_VISIBLE_DEVICES`` empty). Every test that needs one of them must skip; any
error or failure here is a test that assumed a resource nothing installs. ``.ci/run`` runs
it after the ordinary test run.

    python scripts/check_without_resources.py [pytest arguments]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Commands hidden from PATH.
HIDDEN_COMMANDS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def copy_tree(dest: Path) -> None:
    """The files git tracks or would track (a clean clone's content, plus uncommitted work)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def path_without(commands: tuple[str, ...], shim: Path) -> str:
    """A PATH of one folder linking every command on the current PATH but ``commands``."""
    shim.mkdir()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            target = shim / entry.name
            if entry.name in commands or target.exists() or target.is_symlink():
                continue
            if entry.is_file() and os.access(entry.path, os.X_OK):
                target.symlink_to(entry.path)
    return str(shim)


def main(args: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="sentprobe-bare-") as tmp:
        work = Path(tmp) / "repo"  # no ``shared`` beside it
        copy_tree(work)
        empty_wordnet = Path(tmp) / "wordnet"
        empty_wordnet.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("SENTPROBE_DNC", "PYTHONPATH")}
        env.update(
            PATH=path_without(HIDDEN_COMMANDS, Path(tmp) / "bin"),
            WNSEARCHDIR=str(empty_wordnet),
            CUDA_VISIBLE_DEVICES="",
            PYTHONPATH=str(work / "src"),  # the copy's package, not the installed checkout's
            HF_HUB_OFFLINE="1",
        )
        probe = subprocess.run(
            [sys.executable, "-c", "import sentprobe; print(sentprobe.__file__)"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
        )
        if not probe.stdout.strip().startswith(str(work)):
            print(
                f"error: the copy's package is not the one imported: {probe.stdout}{probe.stderr}"
            )
            return 1
        print(f"running the tests in {work} without WordNet, Chromium, ../shared or a GPU")
        return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=work, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
