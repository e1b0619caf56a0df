"""Tree measurements the syntactic generators need: constituency depth and top constituents
(PTB bracketed strings), dependency depth and subtrees (CoNLL-U heads).

``sentprobe.annotation.constituency`` (written alongside the annotators) owns the
constituency definitions; when it provides ``tree_depth`` / ``top_constituents`` they are
used, so the annotators and the generators agree. The small reader here is the fallback.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence
from functools import cache, lru_cache

__all__ = [
    "constituency_depth",
    "dependency_depth",
    "parse_bracketed",
    "subtree",
    "top_constituent_sequence",
]

Tree = tuple[str, list]  # (label, children); a leaf word is a plain str
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def parse_bracketed(text: str) -> Tree:
    """``"(ROOT (S (NP (PRP I)) ...))"`` -> nested ``(label, children)``; words are strings."""
    stack: list[Tree] = [("", [])]
    tokens = _TOKEN.findall(text)
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "(":
            label = tokens[i + 1] if i + 1 < len(tokens) and tokens[i + 1] not in "()" else ""
            stack.append((label, []))
            i += 2 if label else 1
            continue
        if tok == ")":
            if len(stack) < 2:
                raise ValueError(f"unbalanced brackets in {text[:80]!r}")
            node = stack.pop()
            stack[-1][1].append(node)
        else:
            stack[-1][1].append(tok)
        i += 1
    if len(stack) != 1 or len(stack[0][1]) != 1:
        raise ValueError(f"not one bracketed tree: {text[:80]!r}")
    return stack[0][1][0]


def _top(tree: Tree) -> Tree:
    """The clause node: the single child of a ``ROOT``/unlabelled wrapper, else the tree."""
    label, children = tree
    if label in ("ROOT", "TOP", "") and len(children) == 1 and isinstance(children[0], tuple):
        return children[0]
    return tree


def _height(node: Tree | str) -> int:
    if isinstance(node, str):
        return 0
    return 1 + max((_height(c) for c in node[1]), default=0)


def _own_tree_depth(bracketed: str) -> int:
    """Edges from the root to the deepest word, a ROOT wrapper counted as one level
    (so "(ROOT (S (NP (PRP I)) (VP (VBD ran)) (. .)))" has depth 4)."""
    tree = parse_bracketed(bracketed)
    top = _top(tree)
    return _height(top) + 1


def _own_top_constituents(bracketed: str) -> list[str]:
    return [c[0] if isinstance(c, tuple) else c for c in _top(parse_bracketed(bracketed))[1]]


@cache
def _helper(name: str) -> Callable | None:
    """``sentprobe.annotation.constituency.<name>`` if it exists yet (imported lazily)."""
    try:
        module = importlib.import_module("sentprobe.annotation.constituency")
    except ImportError:
        return None
    return getattr(module, name, None)


def implementation(name: str) -> str:
    """Which function computes ``name`` (for the manifest)."""
    if _helper(name) is not None:
        return f"sentprobe.annotation.constituency.{name}"
    return f"sentprobe.generation.trees (own reader, {name})"


@lru_cache(maxsize=1 << 18)
def constituency_depth(bracketed: str) -> int:
    """Depth of a PTB tree, by the annotation package's definition when available.
    Remembered: ``--sizes auto`` asks for every tree's depth twice (range, then task)."""
    helper = _helper("tree_depth")
    return int(helper(bracketed)) if helper else _own_tree_depth(bracketed)


def top_constituent_sequence(bracketed: str) -> tuple[str, ...]:
    """Labels of the children of the top clause node, e.g. ``("NP", "VP", ".")``."""
    helper = _helper("top_constituents")
    if helper is None:
        return tuple(_own_top_constituents(bracketed))
    out = helper(bracketed)
    if isinstance(out, str):
        return tuple(out.split("_") if " " not in out.strip() else out.split())
    return tuple(str(x) for x in out)


def dependency_depth(heads: Sequence[int]) -> int:
    """Nodes on the longest root-to-leaf path (a lone root has depth 1); X-Probe's TreeDepth."""
    depth = [0] * len(heads)

    def walk(i: int, seen: int) -> int:
        if depth[i]:
            return depth[i]
        if seen > len(heads):
            raise ValueError(f"dependency cycle in heads {list(heads)}")
        h = heads[i]
        depth[i] = 1 if h == 0 else walk(h - 1, seen + 1) + 1
        return depth[i]

    return max((walk(i, 0) for i in range(len(heads))), default=0)


def subtree(heads: Sequence[int], i: int) -> list[int]:
    """Sorted 0-based indices of token ``i`` and all its descendants."""
    children: dict[int, list[int]] = {}
    for j, h in enumerate(heads):
        children.setdefault(h - 1, []).append(j)
    out, todo = [], [i]
    while todo:
        j = todo.pop()
        out.append(j)
        todo.extend(children.get(j, []))
    return sorted(out)
