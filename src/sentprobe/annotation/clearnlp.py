"""spaCy's English trees (ClearNLP style) rewritten to Universal Dependencies.

spaCy's English models are trained on OntoNotes converted with ClearNLP: prepositions head
their objects (``sat -prep-> on -pobj-> mat``), the copula heads its predicate (``is -acomp->
happy``) and ``cc`` hangs on the first conjunct. UD does the opposite in all three places, and
the multilingual tasks (tree depth, subject/object of the root) are defined over UD trees, so
without this rewrite English tree depths and roots would not be comparable with gold UD or
with the French/Spanish models (which are trained on UD already). Labels are renamed to their
UD equivalents. The rewrite is label- and structure-level only; tags are untouched.
"""

from __future__ import annotations

from sentprobe.annotation.record import AnnotatedSentence

_RENAME = {
    "ROOT": "root",
    "dobj": "obj",
    "nsubjpass": "nsubj:pass",
    "csubjpass": "csubj:pass",
    "auxpass": "aux:pass",
    "poss": "nmod:poss",
    "neg": "advmod",
    "dative": "iobj",
    "npadvmod": "obl:npmod",
    "quantmod": "advmod",
    "relcl": "acl:relcl",
    "predet": "det:predet",
    "preconj": "cc:preconj",
    "prt": "compound:prt",
    "oprd": "xcomp",
    "acomp": "xcomp",
    "attr": "xcomp",
    "intj": "discourse",
    "meta": "discourse",
    "hmod": "amod",
    "hyph": "punct",
    "nmod": "nmod",
}
_PREDICATIVE = {"VERB", "AUX", "ADJ", "ADV"}


def clearnlp_to_ud(rec: AnnotatedSentence) -> AnnotatedSentence:
    """Rewrite ``rec`` (heads and deprels, in place) from ClearNLP to UD; returns it."""
    heads, rels, upos = rec.heads, rec.deprels, rec.upos
    n = len(heads)

    def kids(i: int) -> list[int]:
        return [j for j in range(n) if heads[j] == i + 1]

    def promote(old: int, new: int, new_rel_of_old: str) -> None:
        """``new`` (a child of ``old``) takes ``old``'s place; ``old`` and its other
        dependents attach to ``new``."""
        heads[new], rels[new] = heads[old], rels[old]
        for j in kids(old):
            if j != new:
                heads[j] = new + 1
        heads[old], rels[old] = new + 1, new_rel_of_old

    # 1. Prepositions: the object becomes the head, the preposition its ``case``/``mark``.
    for p in range(n):
        if rels[p] not in ("prep", "agent"):
            continue
        objs = [j for j in kids(p) if rels[j] in ("pobj", "pcomp")]
        if not objs:
            rels[p] = "obl"  # stranded preposition ("what are you looking at")
            continue
        c = objs[0]
        head = heads[p] - 1
        clause = rels[c] == "pcomp"
        verbal_head = head >= 0 and upos[head] in _PREDICATIVE
        agent = rels[p] == "agent"
        promote(p, c, "mark" if clause else "case")
        if agent:
            rels[c] = "obl:agent"
        elif clause:
            rels[c] = "advcl" if verbal_head else "acl"
        else:
            rels[c] = "obl" if verbal_head else "nmod"
    for j in range(n):  # objects left over (coordinated pobj, etc.) keep a UD-ish label
        if rels[j] in ("pobj", "pcomp"):
            rels[j] = "obj" if rels[j] == "pobj" else "ccomp"

    # 2. Copula: "be" with a predicate nominal/adjective or a PP -> the predicate heads.
    for v in range(n):
        if rec.lemmas[v : v + 1] != ["be"] or rels[v] in ("aux", "auxpass"):
            continue
        ks = kids(v)
        if any(rels[k] == "expl" for k in ks):  # existential "there is X": X is the subject
            for k in ks:
                if rels[k] == "attr":
                    rels[k] = "nsubj"
            continue
        preds = [k for k in ks if rels[k] in ("attr", "acomp")]
        if not preds and not any(rels[k] in ("dobj", "ccomp", "xcomp", "oprd") for k in ks):
            preds = [k for k in ks if rels[k] == "obl" and k > v]
        if preds:
            promote(v, preds[0], "cop")

    # 3. Coordination: ``cc`` attaches to the conjunct that follows it.
    for c in range(n):
        if rels[c] != "cc":
            continue
        h = heads[c] - 1
        if h < 0:
            continue
        following = [j for j in kids(h) if rels[j] == "conj" and j > c]
        if following:
            heads[c] = following[0] + 1

    rec.deprels = [_RENAME.get(r, r) for r in rels]
    return rec
