"""
Named rules that link words of a sentence pair (rule 2 of the rule-based aligner,
`docs/alignment.md`). Three shapes:

- a `LinkRule` says whether content word `i` of the source and content word `j` of the target
  are one word; `tft_allennlp.alignment.word_linker.WordLinker` takes its candidates one-to-one,
  rank by rank;
- a `OneToManyRule` links a word still unlinked to several unlinked words of the other side
  (an acronym and its name, a word and its split form);
- `MutualSimilarity` links content words still unlinked that are each other's most similar word
  by the cosine of contextual vectors.

The learned aligner reads the one-to-one rules as features.
"""

from typing import Dict, List, Optional, Set, Tuple

import numpy

from tft_allennlp.alignment.parsed_sentence import (
    CONTENT_POS,
    FORM_ONLY_POS,
    WORD_KINDS,
    ParsedSentence,
)
from tft_allennlp.alignment.word_forms import (
    equal_without_periods,
    is_abbreviation,
    is_spelling_variant,
    number_value,
    written_form,
)
from tft_allennlp.alignment.wordnet import WordNet

Link = Tuple[int, int]
# Words that may stand between the capitalised words of a name written out without giving its
# acronym a letter ("Pratt & Whitney" / "P&W", "Federal Bureau of Investigation" / "FBI").
ACRONYM_CONNECTORS = frozenset({"of", "and", "&", "for", "the", "-"})


class LinkRule:
    """Evidence that content word `i` of `source` and content word `j` of `target` are one word."""

    name = ""

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        raise NotImplementedError


class SameForm(LinkRule):
    """The same word in any case ("The" / "the")."""

    name = "same_form"

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        return source.words[i].lower() == target.words[j].lower()


class WrittenOut(LinkRule):
    """A symbol and the word it is read as ("%" / "percent")."""

    name = "written_out"

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        return written_form(source.words[i]) == written_form(target.words[j])


class WithoutPeriods(LinkRule):
    """Forms that differ only by periods ("U.S." / "US", "Mr." / "Mr")."""

    name = "without_periods"

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        return equal_without_periods(source.words[i], target.words[j])


class SameNumber(LinkRule):
    """Two numbers of one value ("four" / "4")."""

    name = "same_number"

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        if not source.pos[i] == target.pos[j] == "NUM":
            return False
        value = number_value(source.words[i])
        return value is not None and value == number_value(target.words[j])


class SameLemma(LinkRule):
    """
    The same lemma ("runs" / "ran").

    # Parameters

    same_kind : `bool`, optional (default = `True`)
        Only words of one kind (`WORD_KINDS`), so that the verb "headed" never links to the
        noun "head"; a verb's "-ing" form and the noun written as its lemma are one kind
        ("is working" / "the work").
    """

    name = "same_lemma"

    def __init__(self, same_kind: bool = True) -> None:
        self.same_kind = same_kind

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        if source.lemmas[i] != target.lemmas[j]:
            return False
        if not self.same_kind or WORD_KINDS[source.pos[i]] == WORD_KINDS[target.pos[j]]:
            return True
        return gerund_and_noun(source, i, target, j) or gerund_and_noun(target, j, source, i)


class Abbreviation(LinkRule):
    """A capitalised word and its written abbreviation ("Corp." / "Corporation",
    `tft_allennlp.alignment.word_forms.is_abbreviation`)."""

    name = "abbreviation"

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        return is_abbreviation(source.words[i], target.words[j])


class SpellingVariant(LinkRule):
    """Two proper nouns that are one name spelt two ways ("Qaeda" / "Qaida",
    `tft_allennlp.alignment.word_forms.is_spelling_variant`)."""

    name = "spelling_variant"

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        return source.pos[i] == target.pos[j] == "PROPN" and is_spelling_variant(
            source.words[i], target.words[j]
        )


class WordNetSynonym(LinkRule):
    """
    Content words of one kind, neither a name nor a number, whose lemmas share a WordNet synset
    ("selected" / "chosen", "child" / "kid").

    # Parameters

    wordnet : `WordNet`
        The database (`tft_allennlp.alignment.wordnet`).
    """

    name = "wordnet_synonym"

    def __init__(self, wordnet: WordNet) -> None:
        self.wordnet = wordnet

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        tag, other_tag = source.pos[i], target.pos[j]
        if tag in FORM_ONLY_POS or other_tag in FORM_ONLY_POS:
            return False  # names and numbers link by form only
        kind = WORD_KINDS[tag]
        return kind == WORD_KINDS[other_tag] and self.wordnet.synonyms(
            source.lemmas[i], target.lemmas[j], kind
        )


def gerund_and_noun(one: ParsedSentence, i: int, other: ParsedSentence, j: int) -> bool:
    """Whether word `i` of `one` is a verb in "-ing" and word `j` of `other` a noun written as
    its lemma ("working" / "work", "dissenting" / "dissent")."""
    return (
        one.pos[i] == "VERB"
        and one.words[i].lower().endswith("ing")
        and other.pos[j] == "NOUN"
        and other.words[j].lower() == other.lemmas[j]
    )


class OneToManyRule:
    """Links a word of one side, still unlinked, to several unlinked words of the other side,
    looked for in both directions. Such links support multi-word pairs but make no single-word
    pair."""

    name = ""

    def links(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        linked_source: Set[int],
        linked_target: Set[int],
    ) -> Set[Link]:
        """The rule's links between words not in `linked_source` / `linked_target`; both sets
        are updated with the words it links."""
        found: Set[Link] = set()
        for one, other, one_linked, other_linked, flip in (
            (source, target, linked_source, linked_target, False),
            (target, source, linked_target, linked_source, True),
        ):
            for i, parts in self.one_way(one, other, one_linked, other_linked):
                one_linked.add(i)
                other_linked.update(parts)
                found.update((j, i) if flip else (i, j) for j in parts)
        return found

    def one_way(
        self,
        one: ParsedSentence,
        other: ParsedSentence,
        one_linked: Set[int],
        other_linked: Set[int],
    ) -> List[Tuple[int, List[int]]]:
        """`(word of one, its words of other)` for each link group, words of earlier groups
        counting as linked for later ones."""
        raise NotImplementedError


class Acronym(OneToManyRule):
    """
    A word in capitals and each capitalised word of the run whose initials it gives ("WHO" /
    "World Health Organization", "N.Y." / "New York", "P&W" / "Pratt & Whitney"); connectors
    (`ACRONYM_CONNECTORS`) may stand between the capitalised words and stay unlinked.
    """

    name = "acronym"

    def one_way(
        self,
        one: ParsedSentence,
        other: ParsedSentence,
        one_linked: Set[int],
        other_linked: Set[int],
    ) -> List[Tuple[int, List[int]]]:
        groups = []
        taken = set(other_linked)
        for i, word in enumerate(one.words):
            letters = word.replace(".", "").replace("&", "")
            if i in one_linked or not (2 <= len(letters) <= 6 and letters.isalpha()):
                continue
            if not letters.isupper():  # an acronym is written in capitals
                continue
            run = _initials_run(other, taken, letters)
            if run is not None:
                taken.update(run)
                groups.append((i, run))
        return groups


def _initials_run(sentence: ParsedSentence, linked: Set[int], letters: str) -> Optional[List[int]]:
    """The first run of unlinked capitalised words (connectors between them) whose initials are
    `letters`, as positions of the capitalised words; None when there is none."""

    def capitalised(k: int) -> bool:
        word = sentence.words[k]
        return k not in linked and word[:1].isupper() and word.isalpha() and not word.isupper()

    for start in range(len(sentence.words)):
        if not capitalised(start):
            continue
        run: List[int] = []
        k = start
        while k < len(sentence.words) and len(run) < len(letters):
            if capitalised(k) and sentence.words[k][0] == letters[len(run)]:
                run.append(k)
            elif not (sentence.words[k].lower() in ACRONYM_CONNECTORS and k not in linked):
                break
            k += 1
        if len(run) == len(letters):
            return run
    return None


class SplitWord(OneToManyRule):
    """
    A content word and each of the two or three adjacent words it is written as on the other
    side ("hostnames" / "host names", "reentry" / "re - entry": hyphens between the parts are
    parts too; "%" / "per cent").
    """

    name = "split_word"

    def one_way(
        self,
        one: ParsedSentence,
        other: ParsedSentence,
        one_linked: Set[int],
        other_linked: Set[int],
    ) -> List[Tuple[int, List[int]]]:
        forms = _split_forms(other, other_linked)
        groups = []
        taken = set(other_linked)
        for i, (word, tag) in enumerate(zip(one.words, one.pos)):
            parts = forms.get(written_form(word))  # "%" / "per cent" too
            if tag not in CONTENT_POS or i in one_linked or parts is None:
                continue
            if any(part in taken for part in parts):
                continue  # a part taken by an earlier split word
            taken.update(parts)
            groups.append((i, parts))
        return groups


def _split_forms(sentence: ParsedSentence, linked: Set[int]) -> Dict[str, List[int]]:
    """Concatenated lower-cased form -> the parts' positions, for each run of 2-3 unlinked words
    (hyphens between them are parts too, left out of the form)."""
    found: Dict[str, List[int]] = {}
    for start in range(len(sentence.words)):
        parts: List[int] = []
        pieces: List[str] = []
        for k in range(start, len(sentence.words)):
            word = sentence.words[k]
            if k in linked or (word != "-" and sentence.pos[k] == "PUNCT"):
                break
            if word == "-" and (not pieces or sentence.words[parts[-1]] == "-"):
                break  # a hyphen only between two words
            parts.append(k)
            if word != "-":
                pieces.append(word.lower())
                if len(pieces) >= 2:
                    found.setdefault("".join(pieces), parts[:])
                if len(pieces) == 3:
                    break
    return found


# The least cosine of a similarity link. 0.65 is the lowest threshold whose pairs were judged
# correct at 0.85 or more on the development samples of results/alignment_eval (0.5 before:
# 0.78 there); held out, 0.87 against 0.79, with 0.89 as many correct pairs.
SIMILARITY_THRESHOLD = 0.65


class MutualSimilarity:
    """
    Content words still unlinked, each the other's most similar word among them, linked when
    their similarity (the cosine of contextual vectors) reaches `threshold`.

    # Parameters

    threshold : `float`, optional (default = `0.65`)
    names_by_form : `bool`, optional (default = `True`)
        Two numbers, or two proper nouns, never link by similarity ("$4,450" is not "$4,500").
    """

    name = "mutual_similarity"

    def __init__(self, threshold: float = SIMILARITY_THRESHOLD, names_by_form: bool = True) -> None:
        self.threshold = threshold
        self.names_by_form = names_by_form

    def links(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        linked_source: Set[int],
        linked_target: Set[int],
        similarity: numpy.ndarray,
    ) -> Set[Link]:
        """`similarity`: a `(len(source), len(target))` matrix. The sets are left as they are."""
        free_source = [
            i for i, tag in enumerate(source.pos) if i not in linked_source and tag in CONTENT_POS
        ]
        free_target = [
            j for j, tag in enumerate(target.pos) if j not in linked_target and tag in CONTENT_POS
        ]
        links: Set[Link] = set()
        if not free_source or not free_target:
            return links
        block = similarity[numpy.ix_(free_source, free_target)]
        for row, i in enumerate(free_source):
            column = int(block[row].argmax())
            j = free_target[column]
            both_facts = source.pos[i] == target.pos[j] and source.pos[i] in FORM_ONLY_POS
            if (
                int(block[:, column].argmax()) == row
                and block[row, column] >= self.threshold
                and not (self.names_by_form and both_facts)
            ):
                links.add((i, j))
        return links
