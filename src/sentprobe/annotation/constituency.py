"""Constituency trees without a neural constituency parser, and what the tasks read off them.

The paper's TreeDepth and TopConst come from Stanford PCFG trees. Here a dependency tree is
converted to a PTB-style phrase structure (``dep_to_constituency``), deterministically; the
aim is the bracketing a PTB parse of the same sentence has, above all at the top level:

* the tree is made projective first (a crossing arc is lifted to the head's head) and every
  constituent is built from contiguous spans, so its words are the sentence's, in order;
* punctuation goes where the PTB puts it: a comma, colon, dash, quote or final mark at the
  edge of its head's phrase moves up until it is inside one ("Well , we left ." gives
  ``(S (INTJ (UH Well)) (, ,) (NP we) (VP left) (. .))``), except a closing quote or the
  closing comma of a noun's appositive/relative, which stays with its opening partner
  (``(NP (NP John) (, ,) (NP my friend) (, ,))``); brackets make ``PRN``;
* every token is a preterminal ``(TAG word)``, TAG = PTB tag (``xpos``) when known, else UPOS;
  a head with dependents projects a phrase labelled from its POS (NOUN/PROPN/PRON/NUM/DET ->
  NP, VERB/AUX -> VP, ADJ -> ADJP, ADV -> ADVP, INTJ or UH -> INTJ, ...); a dependent
  without dependents stays a bare preterminal when its relation is a function/modifier one
  (det, amod, nummod, compound, case, cc, punct, aux, cop, mark, nmod:poss, flat, fixed...)
  and projects its phrase otherwise (the subject ``(NP (PRP He))``, an interjection
  ``(INTJ (UH Well))``); function words keep their own function-word dependents flat
  ("because of": ``(IN because) (IN of)``);
* a nominal with a preceding ``case`` word is a PP, a preposition before a subjectless gerund
  too (``(PP (IN for) (S (VP (VBG coming))))``); an NP with phrasal post-modifiers nests
  (``(NP (NP the house) (PP on the hill))``); coordination ``(NP (NP cats) (CC and) (NP
  dogs))``, ``(S (CC But) (S ...) (CC and) (S ...))``;
* a clause is ``S``: dependents before the subject, the subject, adverbs between subject and
  verb (``(S (NP He) (ADVP also) (VP left))``), then a VP with one level per auxiliary,
  copula or infinitival *to*; non-finite clausal dependents are S with PTB's empty subject
  (``(S (VP (TO to) (VP go)))``, a gerund subject ``(S (VP (VBG Mailing) ...))``); a
  complementizer makes ``(SBAR (IN that) (S ...))``, a fronted wh-phrase ``(SBAR (WHNP
  who) (S ...))``, a relative or complement clause without either ``(SBAR (S ...))``;
* the sentence node under ROOT: ``S``; ``SBARQ`` (wh-phrase + ``SQ``) or ``SQ`` (auxiliary
  before the subject) for a main clause ending in "?", and for a wh-word predicate before
  its copula ("What is this X ?", "How are you ?") whatever the final mark; ``SINV`` for
  "Here is the list ."; a verbless fragment keeps its own phrase, as Stanford parses it:
  ``(ROOT (NP (NP The house) (PP on the hill) (. .)))``. Final punctuation is a child of
  that node, so ``top_constituents`` gives ``NP VP .``, ``NP PP .``, ``WHNP SQ .``...

docs/annotation.md lists what still differs from a PTB parse. ``LinkGrammarAnnotator`` is the
rule-based alternative (CMU link-grammar's constituent trees, Debian package
``python3-link-grammar``).

Long because the conversion is one rule set (``_Converter``) whose rules interact (where
punctuation lands depends on how the clause was built); it reads top to bottom in one place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Union

from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.errors import DataError

Tree = tuple[str, list[Union["Tree", str]]]

_PHRASE = {
    "NOUN": "NP", "PROPN": "NP", "PRON": "NP", "NUM": "NP", "DET": "NP", "SYM": "NP", "X": "NP",
    "VERB": "VP", "AUX": "VP", "ADJ": "ADJP", "ADV": "ADVP", "ADP": "PP", "INTJ": "INTJ",
    "PART": "ADVP", "SCONJ": "SBAR",
}  # fmt: skip
#: Relations whose word is a bare preterminal inside its head's phrase when it has no
#: dependents of its own: ``(NP (DT the) (JJ big) (NN house))``.
_FLAT = {
    "det", "det:predet", "det:poss", "amod", "nummod", "compound", "compound:prt", "flat",
    "flat:name", "fixed", "case", "cc", "cc:preconj", "punct", "aux", "aux:pass", "cop",
    "mark", "nmod:poss", "goeswith", "reparandum", "discourse", "dep", "clf",
}  # fmt: skip
#: Function words: always preterminals in their head's constituent, together with any
#: dependents of their own ("because of" -> (IN because) (IN of)).
_FUNCTION = {
    "case", "mark", "cc", "cc:preconj", "aux", "aux:pass", "cop", "det", "det:predet",
    "fixed", "flat", "flat:name", "goeswith", "punct", "compound:prt",
}  # fmt: skip
_SUBJ = ("nsubj", "nsubj:pass", "csubj", "csubj:pass", "expl")
_AUX = ("aux", "aux:pass", "cop")
#: A verbal dependent with one of these relations is a clause (S) even without a subject,
#: as PTB's empty subjects make it: ``(VP (VBP want) (S (VP (TO to) (VP (VB go)))))``.
_CLAUSAL = {
    "csubj", "csubj:pass", "xcomp", "ccomp", "advcl", "advcl:relcl", "parataxis", "acl:relcl",
}  # fmt: skip
#: Subject of "The problem is that ...": the subject of the S above the copula.
_OUTER = ("nsubj:outer", "csubj:outer")
#: Prepositions that take a gerund as a PP, as the PTB brackets them: ``(PP (IN for) (S (VP
#: (VBG doing) ...)))``; other complementizers make SBAR (``while doing``, ``if needed``).
_PREPOSITIONS = {
    "about", "after", "against", "at", "before", "besides", "by", "despite", "during", "for",
    "from", "in", "including", "into", "of", "on", "over", "since", "through", "toward",
    "towards", "under", "upon", "with", "without",
}  # fmt: skip
_NEG = {"not", "n't", "nt"}
_WH_TAGS = ("WP", "WDT", "WRB", "WP$")
#: A fronted wh-phrase's PTB label from the label of the phrase it heads.
_WH = {"NP": "WHNP", "ADVP": "WHADVP", "ADJP": "WHADJP", "PP": "WHPP",
       "WP": "WHNP", "WDT": "WHNP", "WP$": "WHNP", "WRB": "WHADVP"}  # fmt: skip
#: Punctuation the PTB attaches as high as its position allows; brackets (PRN) and hyphens
#: stay inside the phrase they belong to.
_LIFT_TAGS = {",", ":", ".", "``", "''"}
_OPEN = {"(", "[", "{", "-LRB-", "-LSB-", "-LCB-"}
_CLOSE = {")", "]", "}", "-RRB-", "-RSB-", "-RCB-"}
#: A closing mark stays inside the phrase that holds its opening partner: a closing quote
#: with its opening quote, the closing comma of a noun's appositive or relative clause with
#: the comma before it (``(NP (NP John) (, ,) (NP my friend) (, ,))``).
_PARTNERS = {",": {",", ":"}, ":": {",", ":"}, "''": {"``"}}
_NOMINAL = {"NOUN", "PROPN", "PRON", "NUM"}

Item = tuple[int, Tree]  # a child with the position of its first word, for ordering


def _tree(label: str, items: Iterable[Item]) -> Tree:
    return (label, [t for _, t in sorted(items, key=lambda x: x[0])])


def _is_preterminal(t: Tree) -> bool:
    return all(isinstance(c, str) for c in t[1])


class _Converter:
    """Dependency tree -> PTB-style phrase structure (see ``dep_to_constituency``).

    Before building, the tree is made projective (a crossing arc is lifted to the head's
    head, as in pseudo-projective parsing) and punctuation is re-attached where a PTB parse
    puts it: a mark at the edge of its head's phrase (the comma after "Well", after a fronted
    clause, before a conjunct) goes up to the next head until it is inside a phrase, except
    that a closing mark stays with its opening partner. Every constituent is then built from
    contiguous spans, so the words of the tree are the words of the sentence, in order.
    """

    def __init__(self, rec: AnnotatedSentence) -> None:
        self.rec = rec
        n = self.n = len(rec)
        if n == 0:
            raise DataError(None, None, "empty sentence")
        head = [h - 1 for h in rec.heads]
        roots = [i for i, h in enumerate(head) if h < 0]
        if not roots:
            raise DataError(None, None, f"dependency tree without a root: {list(rec.heads)}")
        self.root = roots[0]
        self.rel = list(rec.deprels)
        for k in roots[1:]:  # a second root hangs off the first, as parataxis
            head[k], self.rel[k] = self.root, "parataxis"
        self.tag = [
            rec.xpos[k] if k < len(rec.xpos) and rec.xpos[k] not in ("", "_") else rec.upos[k]
            for k in range(n)
        ]
        self.punct = [
            rec.upos[k] == "PUNCT" or self.tag[k] in _LIFT_TAGS or rec.tokens[k] in _OPEN | _CLOSE
            for k in range(n)
        ]
        self._index(head, projective=True)
        if self._lift_punctuation(head):
            self._index(head, projective=True)

    # ------------------------------------------------------------------ preparation

    def _index(self, head: list[int], *, projective: bool = False) -> None:
        """Children, and the first and last word of every subtree; with ``projective``,
        first make the tree projective if some subtree has a gap."""
        self.head = head
        self.kids: list[list[int]] = [[] for _ in range(self.n)]
        for d, h in enumerate(head):
            if h >= 0:
                self.kids[h].append(d)
        self.first = list(range(self.n))
        self.last = list(range(self.n))
        size = [1] * self.n
        for k in self._postorder():
            for d in self.kids[k]:
                self.first[k] = min(self.first[k], self.first[d])
                self.last[k] = max(self.last[k], self.last[d])
                size[k] += size[d]
        if projective and any(self.last[k] - self.first[k] + 1 != size[k] for k in range(self.n)):
            _projectivize(head)
            self._index(head)

    def _postorder(self) -> list[int]:
        out, stack = [], [(self.root, False)]
        while stack:
            k, done = stack.pop()
            if done:
                out.append(k)
            else:
                stack.append((k, True))
                stack.extend((d, False) for d in self.kids[k])
        return out

    def _liftable(self, k: int) -> bool:
        tok = self.rec.tokens[k]
        if not self.punct[k] or self.kids[k] or tok in _OPEN or tok in _CLOSE:
            return False
        no_xpos = self.tag[k] == self.rec.upos[k]
        return self.tag[k] in _LIFT_TAGS or (no_xpos and self.rec.upos[k] == "PUNCT")

    def _lift_punctuation(self, head: list[int]) -> bool:
        """Move each punctuation mark at the edge of its head's phrase (no word of the
        phrase on one side of it) up to the next head, until it is inside a phrase. True if
        one moved."""
        span: list[tuple[int, int] | None] = [None] * self.n
        for k in self._postorder():
            own = [] if self.punct[k] else [(k, k)]
            spans = [s for s in [span[d] for d in self.kids[k]] + own if s]
            if spans:
                span[k] = (min(s[0] for s in spans), max(s[1] for s in spans))
        moved = False
        for p in range(self.n):
            if not self._liftable(p):
                continue
            h = head[p]
            while h >= 0 and head[h] >= 0:
                s = span[h]
                if s and s[0] < p < s[1]:
                    break
                if s and p > s[1] and self._has_partner(p, h, s[0], head):
                    break
                h = head[h]
            moved = moved or h != head[p]
            head[p] = h
        return moved

    def _has_partner(self, p: int, h: int, start: int, head: list[int]) -> bool:
        partners = _PARTNERS.get(self.tag[p], ())
        for q in range(start + 1, p):
            if head[q] != h or self.tag[q] not in partners:
                continue
            if self.tag[q] == "``":
                return True
            # a comma opens a noun's appositive/relative, not a conjunct or a clause's adjunct
            w = next((k for k in range(q + 1, p) if not self.punct[k]), None)
            if w is None or self.rec.upos[h] not in _NOMINAL:
                continue
            while head[w] != h and head[w] >= 0:
                w = head[w]
            if head[w] == h and self.rel[w] not in ("conj", "cc"):
                return True
        return False

    # ------------------------------------------------------------------ small predicates

    def leaf(self, i: int) -> Tree:
        return (_esc(self.tag[i]), [_esc(self.rec.tokens[i])])

    def label(self, i: int) -> str:
        return "INTJ" if self.is_uh(i) else _PHRASE.get(self.rec.upos[i], "FRAG")

    def is_uh(self, i: int) -> bool:
        return self.rec.upos[i] == "INTJ" or self.tag[i] == "UH"

    def verbal(self, i: int) -> bool:
        return self.rec.upos[i] in ("VERB", "AUX")

    def is_to(self, d: int) -> bool:
        r = self.rec
        return self.rel[d] == "mark" and r.tokens[d].lower() == "to" and r.upos[d] == "PART"

    def is_link(self, d: int) -> bool:
        """An auxiliary, copula or infinitival "to": one VP level each."""
        return self.rel[d] in _AUX or self.is_to(d)

    def has_subject(self, i: int, deps: list[int] | None = None) -> bool:
        deps = self.kids[i] if deps is None else deps
        return any(self.rel[d] in _SUBJ and d < i for d in deps)

    def is_clause(self, i: int, deps: list[int]) -> bool:
        if self.has_subject(i, deps):
            return True
        rel = self.rel[i]
        if rel == "acl":  # "a way to go" is a clause, "the opinion held by ..." a VP
            return any(self.is_to(d) for d in deps)
        if rel in _CLAUSAL:
            return self.verbal(i) or any(self.is_link(d) for d in deps)
        return False

    def wh_token(self, k: int) -> str | None:
        r = self.rec
        if self.tag[k] in _WH_TAGS:
            return self.tag[k]
        feats = r.feats[k] if k < len(r.feats) and r.feats[k] else {}
        return "WP" if feats.get("PronType") == "Int" else None

    def first_word(self, d: int) -> int:
        """The first non-punctuation word of d's phrase (d itself if none)."""
        return next((k for k in range(self.first[d], self.last[d] + 1) if not self.punct[k]), d)

    def wh_tag(self, d: int) -> str | None:
        """The tag of the wh-word d's phrase starts with ("which book", "how long", after a
        preposition "in which"), or None."""
        k = self.first_word(d)
        while k < d and self.rel[k] == "case" and self.head[k] == d:
            k = next((j for j in range(k + 1, d + 1) if not self.punct[j]), d)
        return self.wh_token(k)

    def pos(self, deps: Iterable[int], i: int | None = None) -> int:
        """Position of the first word of head i (if given) with dependents deps."""
        return min([self.first[d] for d in deps] + ([i] if i is not None else []))

    # ------------------------------------------------------------------ constituents

    def parts(self, d: int) -> list[Item]:
        """A dependent as children of its head's constituent."""
        if self.rel[d] in _FUNCTION and self.is_function_word(d):
            if self.rel[d] == "compound:prt" and not self.kids[d] and self.tag[d] == "RP":
                return [(d, ("PRT", [self.leaf(d)]))]  # (PRT (RP up))
            return [(k, self.leaf(k)) for k in range(self.first[d], self.last[d] + 1)]
        return [(self.first[d], self.node(d))]

    def is_function_word(self, d: int) -> bool:
        """A function word, alone or with function words of its own ("because of", "as well
        as"); one heading a whole phrase (a parser error) is built as a phrase instead."""
        stack = list(self.kids[d])
        while stack:
            k = stack.pop()
            if self.rel[k] not in _FUNCTION and not (self.rel[k] == "advmod" and not self.kids[k]):
                return False
            stack.extend(self.kids[k])
        return True

    def parts_of(self, deps: Iterable[int]) -> list[Item]:
        return [p for d in deps for p in self.parts(d)]

    def node(self, d: int, deps: list[int] | None = None) -> Tree:
        """The constituent of dependent d (with ``deps``, by default all its dependents)."""
        deps = sorted(self.kids[d] if deps is None else deps)
        if not deps:
            return self.bare(d)
        f, last = deps[0], deps[-1]
        toks = self.rec.tokens
        if (
            f < d < last
            and toks[f] in _OPEN
            and toks[last] in _CLOSE
            and not self.kids[f]
            and not self.kids[last]
            and f == self.pos(deps, d)
        ):  # (PRN (-LRB- -LRB-) (NP ...) (-RRB- -RRB-))
            return ("PRN", [self.leaf(f), self.node(d, deps[1:-1]), self.leaf(last)])
        if self.is_clause(d, deps):
            return self.clause(d, deps)
        return self.phrase(d, deps)

    def bare(self, d: int) -> Tree:
        """A dependent without dependents of its own."""
        rel, r = self.rel[d], self.rec
        if self.is_uh(d):  # interjections project INTJ, as in the PTB: (INTJ (UH Well))
            return ("INTJ", [self.leaf(d)])
        if rel in _FLAT:
            return self.leaf(d)
        if rel == "advmod" and self.tag[d].startswith("RB"):
            h = self.head[d]
            if r.tokens[d].lower() in _NEG or (h >= 0 and r.upos[h] in ("ADJ", "ADV")):
                return self.leaf(d)  # (RB not), (ADJP (RB very) (JJ good))
        if rel in _CLAUSAL and self.verbal(d):
            return ("S", [("VP", [self.leaf(d)])])
        return (self.label(d), [self.leaf(d)])

    def _wrapped(self, i: int, deps: list[int], core) -> Tree:
        """Case/mark words before the head make a PP/SBAR around ``core(deps after them)``."""
        fn = [d for d in deps if d < i and self.rel[d] in ("case", "mark")]
        if not fn:
            return core(deps)
        cut = max(fn)
        outer = [d for d in deps if d <= cut]
        inner = [d for d in deps if d > cut]
        core_tree = core(inner)
        if any(self.rel[d] == "case" for d in fn):
            label = "PP"
        elif all(self.is_to(d) for d in fn):
            return ("S", [_tree("VP", self.parts_of(outer) + [(self.pos(inner, i), core_tree)])])
        else:
            label = self.mark_label(fn, i)
            if core_tree[0] == "VP":  # "for doing it": (PP (IN for) (S (VP (VBG doing) ...)))
                core_tree = ("S", [core_tree])
        return _tree(label, self.parts_of(outer) + [(self.pos(inner, i), core_tree)])

    def mark_label(self, marks: list[int], i: int) -> str:
        """SBAR for a complementizer, PP for a preposition before a subjectless gerund or
        participle ("for doing", "after leaving")."""
        prep = all(self.rec.tokens[m].lower() in _PREPOSITIONS for m in marks)
        gerund = self.verbal(i) and self.tag[i] in ("VBG", "VBN") and not self.has_subject(i)
        return "PP" if prep and gerund else "SBAR"

    def phrase(self, i: int, deps: list[int]) -> Tree:
        """A non-clausal phrase, coordinated when i has conjuncts."""
        deps = sorted(deps)
        conjs = [d for d in deps if self.rel[d] == "conj" and d > i]
        if not conjs:
            return self._phrase(i, deps)
        own_fn = any(self.rel[k] in ("case", "mark") and k < c for c in conjs for k in self.kids[c])
        if own_fn:  # "in Paris and in Rome": (PP (PP in Paris) (CC and) (PP in Rome))
            return self.coordinated(i, deps, self._phrase)
        # "in Paris and Rome": (PP (IN in) (NP (NP Paris) (CC and) (NP Rome)))
        return self._wrapped(i, deps, lambda ds: self.coordinated(i, ds, self._core))

    def _phrase(self, i: int, deps: list[int]) -> Tree:
        return self._wrapped(i, sorted(deps), lambda ds: self._core(i, ds))

    def _core(self, i: int, deps: list[int]) -> Tree:
        lab = self.label(i)
        post = [d for d in deps if d > i and self.is_postmodifier(d)]
        if lab != "NP" or not post:
            return _tree(lab, [(i, self.leaf(i))] + self.parts_of(deps))
        # an NP with phrasal post-modifiers nests: (NP (NP the house) (PP on the hill))
        cut = min(self.first[d] for d in post)
        inner = [d for d in deps if d < cut and self.last[d] < cut]
        while inner and inner[-1] > i and self.rel[inner[-1]] == "punct":
            inner.pop()  # a comma before an appositive belongs to the outer NP
        outer = [d for d in deps if d not in inner]
        core = _tree(lab, [(i, self.leaf(i))] + self.parts_of(inner))
        return _tree(lab, [(self.pos(inner, i), core)] + self.parts_of(outer))

    def is_postmodifier(self, d: int) -> bool:
        rel = self.rel[d]
        if rel in _FLAT:
            return False
        return bool(self.kids[d]) or rel in ("appos", "nmod", "acl", "acl:relcl")

    def _build(self, c: int, deps: list[int]) -> Tree:
        return self.clause(c, deps) if self.is_clause(c, deps) else self._phrase(c, deps)

    def lead(self, c: int) -> list[int]:
        """The cc/punctuation words a conjunct starts with ("and", ", and")."""
        out, cur = [], self.first[c]
        for k in self.kids[c]:
            if k != cur or k > c or self.rel[k] not in ("cc", "punct"):
                break
            out.append(k)
            cur = self.last[k] + 1
        return out

    def coordinated(self, i: int, deps: list[int], first_build, conj_build=None) -> Tree:
        """``(NP (NP cats) (CC and) (NP dogs))``: the head's own phrase, then each conjunct
        with its leading cc/punctuation at the coordination level."""
        conj_build = conj_build or self._build
        deps = sorted(deps)
        conjs = [d for d in deps if self.rel[d] == "conj" and d > i]
        if not conjs:
            return first_build(i, deps)
        start = self.first[conjs[0]]
        own = [d for d in deps if d not in conjs]
        first = [d for d in own if self.last[d] < start]
        while first and first[-1] > i and self.rel[first[-1]] in ("cc", "punct"):
            first.pop()  # "cats , and dogs" with the comma on "cats"
        head_tree = first_build(i, first)
        items = [(self.pos(first, i), head_tree)] + self.parts_of(d for d in own if d not in first)
        for c in conjs:
            lead = self.lead(c)
            items += self.parts_of(lead)
            rest = [k for k in self.kids[c] if k not in lead]
            items.append((self.pos(rest, c), conj_build(c, rest)))
        return _tree(head_tree[0], items)

    # ------------------------------------------------------------------ clauses

    def clause(self, i: int, deps: list[int], *, top: bool = False) -> Tree:
        deps = sorted(deps)
        conjs = [d for d in deps if self.rel[d] == "conj" and d > i]
        if conjs and all(self.has_subject(c) for c in conjs):
            # (S (CC But) (S ...) (CC and) (S ...)): a leading conjunction is outside
            lead = []
            for d in deps:
                if d < i and self.rel[d] in ("cc", "punct") and not self.kids[d]:
                    lead.append(d)
                else:
                    break
            rest = [d for d in deps if d not in lead]
            t = self.coordinated(i, rest, lambda h, ds: self._clause(h, ds, top=top))
            return ("S", [self.leaf(k) for k in lead] + t[1])
        return self._clause(i, deps, top=top)

    def _clause(self, i: int, deps: list[int], *, top: bool = False) -> Tree:
        """S = dependents before the subject, the subject, adverbs between subject and verb
        (PTB: (S (NP He) (ADVP (RB also)) (VP left))), the VP. With a complementizer
        ``(SBAR (IN that) (S ...))``, with a fronted wh-phrase ``(SBAR (WHNP who) (S ...))``."""
        r = self.rel
        deps = sorted(deps)
        outer = next((d for d in deps if r[d] in _OUTER and d < i), None)
        if outer is not None:
            return self._outer_clause(i, deps, outer, top=top)
        subj = next((d for d in deps if r[d] in _SUBJ and d < i), None)
        marks = [
            d
            for d in deps
            if r[d] == "mark" and d < i and not self.is_to(d) and (subj is None or d < subj)
        ]
        sbar = [d for d in deps if marks and d <= max(marks)]
        rest = [d for d in deps if d not in sbar]
        links = [d for d in rest if d < i and self.is_link(d) and (subj is None or d > subj)]
        vstart = min(links + [i])
        if subj is None:
            pre, mid = [d for d in rest if d < vstart], []
        else:
            pre = [d for d in rest if d < subj]
            mid = [d for d in rest if subj < d < vstart]
        vp_deps = [d for d in rest if d >= vstart]
        items = self.parts_of(pre)
        if subj is not None:
            items.append((self.first[subj], self.node(subj)))
        items += self.parts_of(mid)
        items.append((self.pos(vp_deps, i), self.vp(i, vp_deps)))
        if not top and not marks:
            front = [d for d in pre + ([subj] if subj is not None else [])]
            lead = []
            for d in front:
                if r[d] in ("cc", "punct"):
                    lead.append(d)
                else:
                    break
            wh = next((d for d in front if d not in lead), None)
            if wh is not None and r[wh] not in _CLAUSAL and self.wh_tag(wh):
                inside = [it for it in items if it[0] > self.last[wh]]
                out = self.parts_of(lead) + [(self.first[wh], self.wh(wh))]
                if inside:
                    out.append((inside[0][0], _tree("S", inside)))
                return _tree("SBAR", out)
        t = _tree("S", items)
        if marks:
            label = self.mark_label(marks, i)
            return _tree(label, self.parts_of(sbar) + [(self.pos(rest, i), t)])
        if not top and subj is not None:
            h = self.head[i]
            if r[i] == "acl:relcl" or (r[i] == "ccomp" and h >= 0 and h < i):
                return ("SBAR", [t])  # zero complementizer: (SBAR (S he left))
        return t

    def _outer_clause(self, i: int, deps: list[int], outer: int, *, top: bool) -> Tree:
        """UD's outer subject ("The problem is that we left": "left" heads, "problem" is its
        outer subject), as the PTB brackets it: ``(S (NP The problem) (VP (VBZ is) (SBAR (IN
        that) (S (NP we) (VP left)))))``."""
        r = self.rel
        pre = [d for d in deps if d < outer]
        starts = [d for d in deps if d > outer and (r[d] == "mark" or r[d] in _SUBJ)]
        stop = min(starts + [i])
        links: list[int] = []
        for d in deps:
            if outer < d < stop and r[d] in _AUX:
                links.append(d)
            elif d > outer and links:
                break
        if not links:
            rest = [d for d in deps if d > outer]
            items = self.parts_of(pre) + [(self.first[outer], self.node(outer))]
            return _tree("S", items + [(self.pos(rest, i), self._clause(i, rest))])
        mid = [d for d in deps if outer < d < links[0]]
        inner_deps = [d for d in deps if d > links[-1]]
        inner = self._clause(i, inner_deps)
        if inner[0] == "S":
            inner = ("SBAR", [inner])
        t = inner
        for a in reversed(links):
            t = _tree("VP", self.parts(a) + [(self.pos(inner_deps, i), t)])
        items = self.parts_of(pre) + [(self.first[outer], self.node(outer))] + self.parts_of(mid)
        return _tree("S", items + [(links[0], t)])

    def wh(self, d: int, tree: Tree | None = None) -> Tree:
        """d's phrase relabelled as a wh-phrase: WHNP, WHADVP, WHADJP, WHPP."""
        tag = self.wh_tag(d) or "WP"
        tree = self.node(d) if tree is None else tree
        if _is_preterminal(tree):
            return (_WH.get(tag, "WHNP"), [tree])
        one_word = len(tree[1]) == 1
        label = (None if one_word else _WH.get(tree[0])) or _WH.get(tag, "WHNP")
        kids = tree[1]
        if label == "WHPP":  # (WHPP (IN in) (WHNP (WDT which)))
            kids = [("WHNP", k[1]) if not isinstance(k, str) and k[0] == "NP" else k for k in kids]
        return (label, kids)

    def vp(self, i: int, deps: list[int]) -> Tree:
        """The VP: one level per auxiliary/copula/"to" (``(VP (MD will) (VP (VB go)))``);
        words between two of them stay at the upper level (``(VP (VBD did) (RB not) (VP
        ...))``); after a copula, the predicate phrase ``(VP (VBZ is) (ADJP happy))``."""
        deps = sorted(deps)
        links = [d for d in deps if d < i and self.is_link(d)]
        if not links:
            return self.innermost(i, deps)
        last = links[-1]
        after = [d for d in deps if d > last]
        neg = []
        for d in after:
            if d < i and self.rec.tokens[d].lower() in _NEG and not self.kids[d]:
                neg.append(d)
            else:
                break
        inner_deps = [d for d in after if d not in neg]
        if self.rel[last] == "cop" and not self.verbal(i):
            inner = self.phrase(i, inner_deps)
        else:
            inner = self.innermost(i, inner_deps)
        t = _tree("VP", self.parts(last) + self.parts_of(neg) + [(self.pos(inner_deps, i), inner)])
        for k in reversed(range(len(links) - 1)):
            a, b = links[k], links[k + 1]
            between = [d for d in deps if a < d < b]
            t = _tree("VP", self.parts(a) + self.parts_of(between) + [(self.first[b], t)])
        prefix = [d for d in deps if d < links[0]]
        if prefix:
            t = _tree("VP", self.parts_of(prefix) + [(self.first[links[0]], t)])
        return t

    def innermost(self, i: int, deps: list[int]) -> Tree:
        t = self.phrase(i, deps)
        if self.verbal(i) and t[0] != "VP":
            t = ("VP", t[1])
        return t

    # ------------------------------------------------------------------ the sentence

    def top(self) -> Tree:
        """The sentence node under ROOT. A clause (verbal root, or a subject, auxiliary or
        copula) is S/SQ/SBARQ/SINV; a verbless fragment keeps its own phrase, as Stanford
        parses it: ``(NP (NP The house) (PP on the hill) (. .))``. Final punctuation is a
        child of that node."""
        i = self.root
        words = [k for k in range(self.n) if not self.punct[k]]
        last_word = words[-1] if words else -1
        final: list[int] = []
        for d in reversed(self.kids[i]):
            if d < max(i, last_word) or not self.punct[d] or self.kids[d]:
                break
            final.insert(0, d)
        body = [d for d in self.kids[i] if d not in final]
        question = any("?" in self.rec.tokens[f] for f in final)
        if self.verbal(i) or any(self.rel[d] in _SUBJ or self.is_link(d) for d in body):
            t = self.top_clause(i, body, question)
        else:
            t = self.phrase(i, body)
        return (t[0], t[1] + [self.leaf(f) for f in final])

    def top_clause(self, i: int, deps: list[int], question: bool) -> Tree:
        t = self._wh_predicate(i, deps)
        if t is None and question:
            t = self._question(i, deps)
        if t is None:
            t = self._sinv(i, deps)
        return t if t is not None else self.clause(i, deps, top=True)

    def _leading(self, i: int, deps: list[int]) -> list[int]:
        out = []
        for d in sorted(deps):
            if d < i and (self.rel[d] in ("cc", "punct", "discourse") or self.is_uh(d)):
                out.append(d)
            else:
                break
        return out

    def _wh_predicate(self, i: int, deps: list[int]) -> Tree | None:
        """A wh-word predicate before its copula, "What is this X ?", "How are you ?":
        ``(SBARQ (WHNP (WP What)) (SQ (VBZ is) (NP this X)) (. ?))``."""
        r = self.rel
        if self.verbal(i) or self.has_subject(i, deps):
            return None
        links = [d for d in deps if d > i and r[d] in _AUX]
        if not links:
            return None
        lead = self._leading(i, deps)
        front = [d for d in deps if d < links[0] and d not in lead]
        start = self.pos(front, i)
        first_word = next((k for k in range(start, self.n) if not self.punct[k]), i)
        tag = self.wh_token(first_word)
        if not tag:
            return None
        wh = self.wh(i, self.phrase(i, front))
        only = wh[1][0] if len(wh[1]) == 1 else None
        if not _is_preterminal(wh) and isinstance(only, tuple) and _is_preterminal(only):
            wh = (_WH.get(tag, "WHNP"), wh[1])
        rest = [d for d in deps if d >= links[0]]
        sq = _tree("SQ", self.parts_of(rest))
        return _tree("SBARQ", self.parts_of(lead) + [(start, wh), (self.pos(rest), sq)])

    def _question(self, i: int, deps: list[int]) -> Tree | None:
        """A main clause ending in "?", as the PTB brackets it: a fronted wh-phrase makes
        ``(SBARQ (WHNP What) (SQ (VBD did) (NP you) (VP see)) (. ?))`` ("Who left?": the
        wh-subject is the WHNP, SQ holds the VP); otherwise an auxiliary or copula before the
        subject makes ``(SQ (VBD Did) (NP you) (VP see) (. ?))``; anything else stays S."""
        r = self.rel
        lead = self._leading(i, deps)
        rest = [d for d in sorted(deps) if d not in lead]
        subj = next((d for d in rest if r[d] in _SUBJ and d < i), None)
        pre = [d for d in rest if d < (i if subj is None else subj)]
        fronted = pre[0] if pre else subj
        if fronted is not None and r[fronted] not in _CLAUSAL and self.wh_tag(fronted):
            others = [d for d in pre if d != fronted]
            vp_deps = [d for d in rest if d not in pre and d != subj]
            items = self.parts_of(others)
            if subj is not None and subj != fronted:
                items.append((self.first[subj], self.node(subj)))
            links = [d for d in vp_deps if d < i and self.is_link(d)]
            if subj == fronted and len(links) == 1 and r[links[0]] == "cop":
                # "What is the best system ?": (SQ (VBZ is) (NP the best system))
                items += self.parts(links[0])
                pred_deps = [d for d in vp_deps if d != links[0]]
                items.append((self.pos(pred_deps, i), self.phrase(i, pred_deps)))
            else:
                items.append((self.pos(vp_deps, i), self.vp(i, vp_deps)))
            sq = _tree("SQ", items)
            out = self.parts_of(lead) + [(self.first[fronted], self.wh(fronted))]
            if items:
                out.append((min(p for p, _ in items), sq))
            return _tree("SBARQ", out)
        if subj is not None and any(r[d] in _AUX for d in pre):
            vp_deps = [d for d in rest if d > subj]
            items = self.parts_of(lead) + self.parts_of(pre)
            items.append((self.first[subj], self.node(subj)))
            items.append((self.pos(vp_deps, i), self.vp(i, vp_deps)))
            return _tree("SQ", items)
        return None

    def _sinv(self, i: int, deps: list[int]) -> Tree | None:
        """A verbless predicate before its copula and subject, "Here is the list .":
        ``(SINV (ADVP (RB Here)) (VP (VBZ is)) (NP the list) (. .))``."""
        r = self.rel
        if self.verbal(i) or self.has_subject(i, deps):
            return None
        cops = [d for d in deps if r[d] == "cop" and d > i]
        subj = next((d for d in deps if r[d] in _SUBJ and d > i), None)
        if not cops or subj is None or subj < cops[0]:
            return None
        c = cops[0]
        front = [d for d in deps if d < c]
        verb = [d for d in deps if c <= d < self.first[subj]]
        after = [d for d in deps if d >= self.first[subj]]
        items = [(self.pos(front, i), self.phrase(i, front))]
        items.append((c, _tree("VP", self.parts_of(verb))))
        return _tree("SINV", items + self.parts_of(after))


def _projectivize(head: list[int]) -> None:
    """Lift crossing arcs (to the head's head, shortest arc first) until none is left."""
    n = len(head)

    def dominated(k: int, h: int) -> bool:
        for _ in range(n + 1):
            if k == h:
                return True
            if k < 0:
                return False
            k = head[k]
        raise DataError(None, None, f"dependency tree with a cycle: {[x + 1 for x in head]}")

    while True:
        worst = None
        for d, h in enumerate(head):
            if h < 0:
                continue
            lo, hi = (h, d) if h < d else (d, h)
            shorter = worst is None or hi - lo < worst[1]
            if hi - lo > 1 and shorter and any(not dominated(k, h) for k in range(lo + 1, hi)):
                worst = (d, hi - lo)
        if worst is None:
            return
        d = worst[0]
        head[d] = head[head[d]]


def _esc(s: str) -> str:
    return s.replace("(", "-LRB-").replace(")", "-RRB-").replace(" ", "_")


def dep_to_constituency(rec: AnnotatedSentence) -> str:
    """PTB-style bracketed tree ``(ROOT (S ...))`` converted from the dependency tree."""
    return format_tree(("ROOT", [_Converter(rec).top()]))


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
