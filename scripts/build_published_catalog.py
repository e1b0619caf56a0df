"""Write src/sentprobe/datasets/data/published.json: for each published suite, the maintainers'
repository, the commit ``sentprobe download`` fetches from, and each file's git blob id.

A blob id is SHA-1 of ``blob <size>\\0<bytes>``, so it pins every file's size and content at
that commit; a blob-less clone is enough to read it (the data itself is not fetched)::

    git clone --filter=blob:none --no-checkout https://github.com/facebookresearch/SentEval
    python scripts/build_published_catalog.py senteval=SentEval xprobe=xprobe dnc=DNC
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

#: suite -> (repository, folder inside it, which files of that folder belong to the suite).
SOURCES = {
    "senteval": ("facebookresearch/SentEval", "data/probing/", r"[a-z_]+\.txt|README\.md"),
    "xprobe": ("ltgoslo/xprobe", "", r"[a-z]{2}/[a-z_]+/(tr|va|te)\.txt"),
    "dnc": (
        "decompositional-semantics-initiative/DNC",
        "function_words/",
        r"(ACCEPTABILITY|NLI)/[a-z-]+_(data|metadata)\.json|README\.md",
    ),
}
OUT = Path(__file__).resolve().parents[1] / "src/sentprobe/datasets/data/published.json"


def entry(suite: str, clone: Path) -> dict:
    repository, folder, pattern = SOURCES[suite]
    git = ["git", "-C", str(clone)]
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    tree = subprocess.run(
        [*git, "ls-tree", "-r", "-l", "HEAD", folder or "."],
        capture_output=True,
        text=True,
        check=True,
    )
    files, sizes = {}, {}
    for line in tree.stdout.splitlines():
        meta, path = line.split("\t", 1)
        rel = path[len(folder) :]
        if re.fullmatch(pattern, rel):
            files[rel] = meta.split()[2]
            size = meta.split()[3]
            if size.isdigit():  # a blob-less clone may not know it: the download's cap bounds it
                sizes[rel] = int(size)
    return {
        "repository": repository,
        "commit": commit.stdout.strip(),
        "folder": folder,
        "files": dict(sorted(files.items())),
        "bytes": dict(sorted(sizes.items())),
    }


def main(argv: list[str]) -> None:
    catalog = json.loads(OUT.read_text()) if OUT.exists() else {}
    for arg in argv:
        suite, clone = arg.split("=", 1)
        catalog[suite] = entry(suite, Path(clone))
    OUT.write_text(json.dumps(catalog, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
