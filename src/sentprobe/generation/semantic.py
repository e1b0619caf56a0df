"""Semantic tasks with a lexical split (Conneau et al. 2018, sec. 2): Tense, SubjNum, ObjNum.

Each finds one target word per sentence (the tense-bearing verb, the subject, the object of
the main clause), labels the sentence from its tag, and keeps only targets whose form has a
corpus frequency inside ``freq_band``; each form is then confined to one split, and every
class of every split rests on many forms (``max_form_share``, ``min_forms``,
``items_per_form``, ``match_lengths``: :class:`~sentprobe.generation.lexical.FormRules`).

``annotation="ptb"`` (English, the paper): labels from Penn Treebank tags (``xpos``).
``annotation="ud"`` (X-Probe): labels from UD features (``Tense``, ``Number``). Labels are
SentEval's (PAST/PRES, NN/NNS); the X-Probe writer maps them to Past/Pres, Sing/Plur.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

from sentprobe.annotation.record import AnnotatedSentence

from .base import GeneratedTask, Scan, make_rng, per_class, splits_from
from .inputs import Item, annotated_items
from .lexical import FormRules, form_frequencies, in_band, split_by_form

__all__ = [
    "SUBJECT_REQUIRED",
    "ObjNum",
    "SubjNum",
    "Tense",
    "indicative",
    "main_clause",
    "tense_problem",
    "tense_shape_problem",
]

Annotation = Literal["ptb", "ud"]
#: Dependents that carry the finite verb of a clause whose root is a participle or predicate.
FINITE_CARRIERS = ("aux", "aux:pass", "cop")
#: Verbs of saying: in '" It was late , " she said .' the speech verb is the main clause
#: (UD EWT's gold trees and PTB parses agree), so its preceding ``ccomp`` is not promoted.
REPORTING_VERBS = frozenset({
    "say", "tell", "conclude", "add", "note", "explain", "write", "ask", "reply", "answer",
    "admit", "claim", "argue", "state", "warn", "report", "announce", "declare", "insist",
    "respond", "comment", "acknowledge", "recall", "complain", "predict", "estimate", "confirm",
    "deny", "show", "testify", "shout", "whisper", "cry", "exclaim",
})  # fmt: skip


def main_clause(sent: AnnotatedSentence) -> int:
    """Index of the head of the main clause: the root, except in a comma-spliced run-on.

    Of "It was late , we left ." UD makes the *first* clause the root and the later ones
    ``parataxis``; spaCy's English parser (ClearNLP scheme) instead roots the *last* clause
    and hangs the earlier one on it as a ``ccomp`` that precedes it. Such a preceding
    ``ccomp`` of the root is the main clause (the leftmost one, if several), unless the root
    is a verb of saying ('" It was late , " she said .', where the speech verb is the main
    clause in UD and in a PTB parse alike). Gold UD trees almost never have such a ``ccomp``
    elsewhere (3 of the 9,053 Tense labels of English EWT change). English only: the
    pattern and the list of verbs are the English parser's; other languages keep the root.
    """
    root = sent.root
    if sent.lang != "en":
        return root
    early = [j for j in sent.children(root) if j < root and sent.deprels[j] == "ccomp"]
    if not early:
        return root
    if _lemma(sent, root) in REPORTING_VERBS:
        return root
    return min(early)


def _feat(sent: AnnotatedSentence, i: int, name: str) -> str | None:
    return sent.feats[i].get(name) if i < len(sent.feats) and sent.feats[i] else None


def _xpos(sent: AnnotatedSentence, i: int) -> str:
    return sent.xpos[i] if i < len(sent.xpos) else ""


class _LexicalTask:
    """Shared ``generate``: find targets, filter by form frequency, split by form."""

    # Subclasses are dataclasses (``generate`` records their fields with ``asdict``).
    __dataclass_fields__: ClassVar[dict[str, Any]]
    name: ClassVar[str]
    file: ClassVar[str]
    labels: ClassVar[list[str]]
    freq_band: tuple[int, int]
    max_form_share: float
    min_forms: int
    items_per_form: int
    match_lengths: bool

    @property
    def form_rules(self) -> FormRules:
        return FormRules(
            self.max_form_share, self.min_forms, self.items_per_form, self.match_lengths
        )

    def target(self, sent: AnnotatedSentence) -> tuple[str, int] | str:
        """``(label, target token index)``, or the reason the sentence is rejected."""
        raise NotImplementedError

    def generate(
        self, sentences: Sequence[AnnotatedSentence], sizes: Mapping[str, int], seed: int
    ) -> GeneratedTask:
        return self.draw(self.scan(sentences), sizes, seed)

    def scan(self, sentences: Sequence[AnnotatedSentence]) -> Scan:
        """The size-independent part: eligible sentences with their (label, target form)."""
        stats: Counter = Counter()
        items = annotated_items(sentences, stats, self.name)
        freq = form_frequencies(item.sent.tokens for item in items)
        chosen: list[Item] = []
        candidates: list[tuple[str, str]] = []
        for item in items:
            found = self.target(item.sent)
            if isinstance(found, str):
                stats[f"rejected: {found}"] += 1
                continue
            label, i = found
            form = item.sent.tokens[i].lower()
            if not in_band(freq[form], self.freq_band):
                stats[f"rejected: target form frequency outside {list(self.freq_band)}"] += 1
                continue
            chosen.append(item)
            candidates.append((label, form))
        stats["eligible"] = len(chosen)
        return Scan((chosen, candidates), stats)

    def draw(self, scan: Scan, sizes: Mapping[str, int], seed: int) -> GeneratedTask:
        (chosen, candidates), stats = scan.pools, Counter(scan.stats)
        counts = per_class(sizes, len(self.labels), self.name)
        rng = make_rng(seed, self.name)
        picked = split_by_form(
            candidates,
            self.labels,
            counts,
            rng,
            self.name,
            relax=f"widen freq_band (now {list(self.freq_band)})",
            lengths=[len(item) for item in chosen],
            rules=self.form_rules,
        )
        drawn = {
            s: {lab: [chosen[i].text for i in idx] for lab, idx in by.items()}
            for s, by in picked.items()
        }
        targets = {
            chosen[i].text: candidates[i][1]
            for by in picked.values()
            for idx in by.values()
            for i in idx
        }
        stats["target forms used"] = len(set(targets.values()))
        splits = splits_from(drawn, rng)
        stats["used"] = sum(len(v) for v in splits.values())
        return GeneratedTask(
            self.name, self.file, list(self.labels), splits, stats, asdict(self), targets=targets
        )


@dataclass
class Tense(_LexicalTask):
    """Tense: is the main-clause verb past (PAST) or present (PRES)?

    The tense-bearing word is the finite verb of the main clause, the word whose tag a
    constituency parser's top VP head would show: the leftmost finite ``aux``/``aux:pass``/
    ``cop`` dependent of the root if there is one ("has eaten" -> "has", "was happy" ->
    "was"), else the root itself. ``ptb``: VBD -> PAST, VBZ/VBP -> PRES; a modal (MD) or a
    non-finite root without a finite auxiliary is rejected.

    ``ud``: only a finite indicative verb carries a label (``tense_problem``): the word
    needs ``VerbForm=Fin``, ``Mood=Ind`` and ``Tense`` Past or Pres, so imperatives,
    subjunctives, conditionals, infinitives and participles are rejected, and so is a word
    without ``Mood`` (an annotator that does not mark mood gets no label, never a guessed
    one; English PTB tags VBD/VBZ/VBP are indicative by definition and stand in for it).
    Two checks catch the tagger's commonest errors on instructional text, where they are
    not morphology's to make: in a language whose indicative clause has an overt subject
    (``SUBJECT_REQUIRED``) a main clause without one is an imperative or a caption
    ("Ouvrez le menu", "Inclut des salutations") and is rejected; and a form labelled with a
    tense must have that tense's shape where the language marks it in the ending
    (``tense_shape_problem``: French passé simple that is also the present, Russian
    imperatives tagged past, Spanish subjunctives tagged past).

    ``ud_root_only=True`` instead takes the root's own ``Tense`` whatever its VerbForm,
    exactly as X-Probe (which labels "has eaten" Past from the participle); it still
    rejects a root whose ``Mood`` is not indicative or that is an infinitive.
    """

    name: ClassVar[str] = "Tense"
    file: ClassVar[str] = "past_present.txt"
    labels: ClassVar[list[str]] = ["PAST", "PRES"]

    annotation: Annotation = "ptb"
    freq_band: tuple[int, int] = (100, 5000)
    ud_root_only: bool = False
    max_form_share: float = 0.1
    min_forms: int = 30
    items_per_form: int = 5
    match_lengths: bool = True

    _PTB: ClassVar[dict[str, str]] = {"VBD": "PAST", "VBZ": "PRES", "VBP": "PRES"}
    _UD: ClassVar[dict[str, str]] = {"Past": "PAST", "Pres": "PRES"}

    def _finite(self, sent: AnnotatedSentence, i: int) -> bool:
        if self.annotation == "ptb":
            return _xpos(sent, i) in _FINITE_PTB
        return _feat(sent, i, "Tense") is not None and _feat(sent, i, "VerbForm") in (None, "Fin")

    def tense_word(self, sent: AnnotatedSentence) -> int | None:
        """Index of the tense-bearing word of the main clause, or None."""
        if self.annotation == "ud" and self.ud_root_only:
            return sent.root
        root = main_clause(sent)
        carriers = [j for j in sent.children(root) if sent.deprels[j] in FINITE_CARRIERS]
        finite = [j for j in carriers if self._finite(sent, j)]
        if finite:
            return min(finite)
        return root if self._finite(sent, root) else None

    def target(self, sent: AnnotatedSentence) -> tuple[str, int] | str:
        if self.annotation == "ptb" and not sent.xpos:
            return "no PTB tags (xpos)"
        i = self.tense_word(sent)
        if i is None:
            return "no finite verb in the main clause"
        if self.annotation == "ptb":
            if _xpos(sent, i) == "MD":
                return "main clause verb is a modal (MD)"
            label = self._PTB.get(_xpos(sent, i))
            return (label, i) if label else "main clause tense not past or present"
        problem = (root_only_problem if self.ud_root_only else tense_problem)(sent, i)
        if problem:
            return problem
        label = self._UD.get(_feat(sent, i, "Tense") or "")
        return (label, i) if label else "main clause tense not past or present"


_FINITE_PTB = ("VBD", "VBZ", "VBP", "MD")
#: Languages whose finite indicative clause has an overt subject (no pro-drop): there a main
#: clause without one is an imperative or a caption, whatever the tagger says of its verb.
SUBJECT_REQUIRED = frozenset({"en", "fr", "de"})
#: Relations that give a clause its subject (an expletive counts: "il faut", "es gibt").
SUBJECT_RELATIONS = ("nsubj", "nsubj:pass", "csubj", "csubj:pass", "expl", "expl:subj")


def indicative(sent: AnnotatedSentence, i: int) -> bool | None:
    """Is word ``i`` in the indicative? None when the annotation does not say: no ``Mood``
    feature and no PTB tag VBD/VBZ/VBP (English's indicative forms; its imperative and
    subjunctive are VB), which an English annotator gives where it gives no Mood."""
    mood = _feat(sent, i, "Mood")
    if mood is not None:
        return mood == "Ind"
    if _xpos(sent, i) in ("VBD", "VBZ", "VBP"):
        return True
    return None


def tense_problem(sent: AnnotatedSentence, i: int) -> str | None:
    """Why word ``i`` (the tense-bearing word of the main clause) cannot carry a UD tense
    label, or None when it can: it must be a finite indicative verb with a tense, in a main
    clause with a subject where the language requires one, with the shape of its tense."""
    form = _feat(sent, i, "VerbForm")
    if form != "Fin":
        return f"tense word not finite (VerbForm={form or 'none'})"
    mood = indicative(sent, i)
    if mood is None:
        return "tense word has no Mood feature (the annotator does not mark mood)"
    if not mood:
        return f"tense word not indicative (Mood={_feat(sent, i, 'Mood')})"
    if sent.lang in SUBJECT_REQUIRED:
        head = main_clause(sent)
        if not any(sent.deprels[j] in SUBJECT_RELATIONS for j in sent.children(head)):
            return "main clause has no subject (an imperative or a caption)"
    return tense_shape_problem(sent, i)


def root_only_problem(sent: AnnotatedSentence, i: int) -> str | None:
    """X-Probe's root-only rule: the root's tense whatever its VerbForm, but never from an
    imperative, subjunctive or conditional, nor from an infinitive."""
    mood = _feat(sent, i, "Mood")
    if mood is not None and mood != "Ind":
        return f"tense word not indicative (Mood={mood})"
    if _feat(sent, i, "VerbForm") == "Inf":
        return "tense word not finite (VerbForm=Inf)"
    return None


def _french_present_homograph(form: str, lemma: str) -> bool:
    """A French passé simple singular that is also the present: the 2nd group (finir ->
    finit/finis) and the verbs in -ire/-ure whose two tenses share a stem (inclure ->
    inclut, dire -> dit, suffire -> suffit). Without a lexicon the pattern also catches
    some unambiguous forms (ouvrir -> ouvrit): those are rejected, never mislabelled."""
    for cut in (1, 2):
        stem = lemma[:-cut]
        if stem and form in (stem + "t", stem + "s"):
            return True
    return False


_RU_PAST_ENDINGS = ("л", "ла", "ло", "ли")
_RU_REFLEXIVE = ("ся", "сь")


def tense_shape_problem(sent: AnnotatedSentence, i: int) -> str | None:
    """Why word ``i``'s form cannot have the tense its features give, in a language whose
    endings tell the two tenses apart and whose tagger is known to confuse them; None when
    the form fits (or the language has no such check).

    - French: a Past (passé simple) that is also a present form (``_french_present_homograph``:
      "Inclut", "fournit", "agit" in "il s'agit").
    - Russian: a Past must end in the past suffix -л/-ла/-ло/-ли (reflexive -ся/-сь after
      it): "введите", "щёлкните" are imperatives the tagger calls past; the few past forms
      without -л ("мог", "умер") are rejected with them. A Pres must not end in -те/-тесь,
      where the present's second person plural and the imperative share a form
      ("выберите").
    - Spanish: a Past (pretérito) never ends in an unaccented -a/-e except "fue"; such a
      form is a subjunctive or formal imperative the tagger calls past ("Deseleccione").
    """
    word = sent.tokens[i].lower()
    tense = _feat(sent, i, "Tense")
    bare = word[:-2] if sent.lang == "ru" and word.endswith(_RU_REFLEXIVE) else word
    if sent.lang == "fr" and tense == "Past" and _french_present_homograph(word, _lemma(sent, i)):
        return "French passé simple form that is also a present (ambiguous)"
    if sent.lang == "ru" and tense == "Past" and not bare.endswith(_RU_PAST_ENDINGS):
        return "Russian past form without the past suffix -л- (an imperative?)"
    if sent.lang == "ru" and tense == "Pres" and bare.endswith("те"):
        return "Russian -те form: imperative and present second person plural alike"
    if sent.lang == "es" and tense == "Past" and word.endswith(("a", "e")) and word != "fue":
        return "Spanish past form in unaccented -a/-e (a subjunctive or imperative?)"
    return None


@dataclass
class SubjNum(_LexicalTask):
    """SubjNum: is the subject of the main clause singular (NN) or plural (NNS)?

    The subject is the only dependent of the root with a relation in ``relations``
    (sentences with none or several are rejected). ``ptb``: its tag NN or NNS (proper
    nouns, pronouns and anything else rejected, as in the paper). ``ud``: its UPOS must be
    in ``upos`` (nouns only by default) and its ``Number`` Sing (-> NN) or Plur (-> NNS).
    """

    name: ClassVar[str] = "SubjNum"
    file: ClassVar[str] = "subj_number.txt"
    labels: ClassVar[list[str]] = ["NN", "NNS"]
    role: ClassVar[str] = "subject"

    annotation: Annotation = "ptb"
    freq_band: tuple[int, int] = (100, 5000)
    relations: tuple[str, ...] = ("nsubj", "nsubj:pass")
    upos: tuple[str, ...] = ("NOUN",)
    max_form_share: float = 0.1
    min_forms: int = 30
    items_per_form: int = 5
    match_lengths: bool = True

    _UD: ClassVar[dict[str, str]] = {"Sing": "NN", "Plur": "NNS"}

    def arguments(self, sent: AnnotatedSentence) -> list[int]:
        """The main clause's dependents with one of ``relations``."""
        return [j for j in sent.children(main_clause(sent)) if sent.deprels[j] in self.relations]

    def target(self, sent: AnnotatedSentence) -> tuple[str, int] | str:
        args = self.arguments(sent)
        if not args:
            return f"main clause has no {self.role}"
        if len(args) > 1:
            return f"main clause has several {self.role}s"
        i = args[0]
        if self.annotation == "ptb":
            tag = _xpos(sent, i)
            return (tag, i) if tag in ("NN", "NNS") else f"{self.role} not tagged NN/NNS"
        if sent.upos[i] not in self.upos:
            return f"{self.role} UPOS not in {list(self.upos)}"
        label = self._UD.get(_feat(sent, i, "Number") or "")
        return (label, i) if label else f"{self.role} Number not Sing/Plur"


@dataclass
class ObjNum(SubjNum):
    """ObjNum: is the direct object of the main clause singular (NN) or plural (NNS)?
    Same rules as SubjNum, on the main clause's ``obj`` dependent (``arguments``)."""

    name: ClassVar[str] = "ObjNum"
    file: ClassVar[str] = "obj_number.txt"
    role: ClassVar[str] = "object"

    relations: tuple[str, ...] = ("obj", "dobj")

    def arguments(self, sent: AnnotatedSentence) -> list[int]:
        """The main clause's ``obj``; without one, the object a ClearNLP-style parse hides
        in a complement clause that UD analyses as the main clause's own:

        - "The best way is to use coupons": the parse roots *is* and hangs "to use coupons"
          on it as an ``xcomp``; UD makes *use* the root (with *is* as ``cop``), so the
          object of that ``xcomp`` verb is the main clause's object;
        - "Johnson would not let the military cross": the parse makes *military* the
          ``nsubj`` of a ``ccomp`` *cross*; UD makes it the ``obj`` of *let* (with *cross*
          as ``xcomp``). A complement without ``mark``, auxiliary or copula whose head is
          not finite is such a small clause; its preceding subject is the object.
        """
        args = super().arguments(sent)
        if args or sent.lang != "en":  # the two patterns are the English parser's
            return args
        head = main_clause(sent)
        for j in sent.children(head):
            if j < head:
                continue
            rel, kids = sent.deprels[j], sent.children(j)
            if rel == "xcomp" and _lemma(sent, head) == "be" and sent.upos[j] == "VERB":
                return [k for k in kids if sent.deprels[k] in self.relations]
            if (
                rel == "ccomp"
                and _lemma(sent, head) != "be"
                and _xpos(sent, j) not in _FINITE_PTB
                and _feat(sent, j, "VerbForm") != "Fin"
                and not any(sent.deprels[k] in _CLAUSE_MARKERS for k in kids)
            ):
                return [k for k in kids if k < j and sent.deprels[k] == "nsubj"]
        return []


#: A complement clause with one of these is a full clause, not a small clause.
_CLAUSE_MARKERS = ("mark", "aux", "aux:pass", "cop", "expl")


def _lemma(sent: AnnotatedSentence, i: int) -> str:
    lemma = sent.lemmas[i] if i < len(sent.lemmas) else ""
    return (lemma or sent.tokens[i]).lower()
