"""
Phrase alignment of a sentential paraphrase pair: syntactic phrases from a dependency parse,
word links from lexical evidence (and optionally contextual embeddings), and the phrase pairs
that those links support.

The rules, in order (each is tested in `tests/alignment/phrase_aligner_test.py`):

1. Phrases. Every content word (noun, proper noun, verb, adjective, adverb, number) is a
   single-word phrase. Every token's subtree is a multi-word phrase when it spans two or more
   words (a constituent-like phrase for projective parses), and so is the verb phrase of every
   word with a subject to its left: from its first auxiliary or negation to its right edge.
   Punctuation is trimmed from the edges, spans that are only function words are dropped, and
   the whole sentence is not a phrase (that pair is the sentential paraphrase itself).
2. Word links, one-to-one, between content words only (identical function words such as "the"
   are too frequent to be evidence, and linking them across reordered phrases would make
   correct phrase pairs inconsistent). Candidates are content-word pairs with the same
   lower-cased form or the same lemma; they are taken greedily by evidence (form before lemma),
   then by closeness of relative position, so repeated words link in order. With a similarity
   matrix (contextual embeddings), content words still unlinked are then linked when they are
   each other's most similar word and the cosine reaches `similarity_threshold`.
3. Phrase pairs. A source and a target phrase align when both are single words or both are
   multi-word phrases, at least one link lies inside the pair, and the pair is
   consistent: no word inside either phrase is linked to a word outside the other. Among the
   consistent multi-word pairs, a phrase keeps only the partners closest to it in length, and
   a pair is kept only when each side is among the other's closest (this chooses
   "in the park" / "through the park" over "in the park" / "the park").
"""

from typing import TYPE_CHECKING, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

import numpy

from tft_allennlp.common.aligned_corpus import PhrasePair, Span, corpus_record

if TYPE_CHECKING:  # for annotations only
    import spacy.tokens

CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM"})
SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
VERB_PREFIX = frozenset({"aux", "auxpass", "neg"})


class ParsedSentence(NamedTuple):
    """What the aligner needs of a parsed sentence (picklable, unlike a spaCy `Doc`)."""

    words: List[str]
    lemmas: List[str]
    pos: List[str]
    phrases: List[Span]


def parse_to_sentence(doc: "spacy.tokens.Doc") -> ParsedSentence:
    """Extracts words, lemmas, coarse POS tags and syntactic phrases from a spaCy `Doc`."""
    words = [token.text for token in doc]
    pos = [token.pos_ for token in doc]
    content = [tag in CONTENT_POS for tag in pos]
    punctuation = [tag == "PUNCT" for tag in pos]

    def trimmed(start: int, end: int) -> Optional[Span]:
        while start <= end and punctuation[start]:
            start += 1
        while end >= start and punctuation[end]:
            end -= 1
        return (start, end) if start <= end else None

    sentence = trimmed(0, len(words) - 1)
    phrases: Set[Span] = {(i, i) for i in range(len(words)) if content[i]}
    for token in doc:
        candidates = [trimmed(token.left_edge.i, token.right_edge.i)]
        subjects = [child.i for child in token.children if child.dep_ in SUBJECTS]
        if subjects and max(subjects) < token.i:
            prefix = [child.i for child in token.lefts if child.dep_ in VERB_PREFIX]
            start = min(prefix + [token.i])
            if start > max(subjects):
                candidates.append(trimmed(start, token.right_edge.i))
        for span in candidates:
            if (
                span is not None
                and span[1] > span[0]
                and span != sentence
                and any(content[span[0] : span[1] + 1])
            ):
                phrases.add(span)
    return ParsedSentence(words, [token.lemma_.lower() for token in doc], pos, sorted(phrases))


def link_words(
    source: ParsedSentence,
    target: ParsedSentence,
    similarity: Optional[numpy.ndarray] = None,
    similarity_threshold: float = 0.5,
) -> Set[Tuple[int, int]]:
    """One-to-one word links (rule 2); `similarity` is a `(len(source), len(target))` matrix."""
    candidates = []
    source_length, target_length = len(source.words), len(target.words)
    for i, (word, lemma, tag) in enumerate(zip(source.words, source.lemmas, source.pos)):
        if tag not in CONTENT_POS:
            continue
        for j, (other, other_lemma, other_tag) in enumerate(
            zip(target.words, target.lemmas, target.pos)
        ):
            if other_tag not in CONTENT_POS:
                continue
            if word.lower() == other.lower():
                evidence = 0
            elif lemma == other_lemma:
                evidence = 1
            else:
                continue
            distance = abs(i / source_length - j / target_length)
            candidates.append((evidence, distance, i, j))
    links: Set[Tuple[int, int]] = set()
    linked_source: Set[int] = set()
    linked_target: Set[int] = set()
    for _, _, i, j in sorted(candidates):
        if i not in linked_source and j not in linked_target:
            links.add((i, j))
            linked_source.add(i)
            linked_target.add(j)
    if similarity is not None:
        free_source = [
            i
            for i in range(source_length)
            if i not in linked_source and source.pos[i] in CONTENT_POS
        ]
        free_target = [
            j
            for j in range(target_length)
            if j not in linked_target and target.pos[j] in CONTENT_POS
        ]
        if free_source and free_target:
            block = similarity[numpy.ix_(free_source, free_target)]
            for row, i in enumerate(free_source):
                column = int(block[row].argmax())
                if (
                    int(block[:, column].argmax()) == row
                    and block[row, column] >= similarity_threshold
                ):
                    links.add((i, free_target[column]))
    return links


def align_phrases(
    source: ParsedSentence, target: ParsedSentence, links: Set[Tuple[int, int]]
) -> List[PhrasePair]:
    """The phrase pairs supported by `links` (rule 3), sorted."""
    source_links: Dict[int, Set[int]] = {}
    target_links: Dict[int, Set[int]] = {}
    for i, j in links:
        source_links.setdefault(i, set()).add(j)
        target_links.setdefault(j, set()).add(i)

    def consistent(source_span: Span, target_span: Span) -> bool:
        for i in range(source_span[0], source_span[1] + 1):
            if any(not target_span[0] <= j <= target_span[1] for j in source_links.get(i, ())):
                return False
        for j in range(target_span[0], target_span[1] + 1):
            if any(not source_span[0] <= i <= source_span[1] for i in target_links.get(j, ())):
                return False
        return True

    singles: List[PhrasePair] = [
        ((i, i), (j, j)) for i, j in links if (i, i) in source.phrases and (j, j) in target.phrases
    ]
    multi: List[PhrasePair] = []
    source_multi = [span for span in source.phrases if span[1] > span[0]]
    target_multi = [span for span in target.phrases if span[1] > span[0]]
    for source_span in source_multi:
        for target_span in target_multi:
            supported = any(
                source_span[0] <= i <= source_span[1] and target_span[0] <= j <= target_span[1]
                for i, j in links
            )
            if supported and consistent(source_span, target_span):
                multi.append((source_span, target_span))
    return sorted(singles + _closest_in_length(multi))


def _closest_in_length(pairs: Sequence[PhrasePair]) -> List[PhrasePair]:
    def length(span: Span) -> int:
        return span[1] - span[0] + 1

    best_for_source: Dict[Span, int] = {}
    best_for_target: Dict[Span, int] = {}
    for source_span, target_span in pairs:
        difference = abs(length(source_span) - length(target_span))
        best_for_source[source_span] = min(best_for_source.get(source_span, difference), difference)
        best_for_target[target_span] = min(best_for_target.get(target_span, difference), difference)
    return [
        (source_span, target_span)
        for source_span, target_span in pairs
        if abs(length(source_span) - length(target_span))
        == best_for_source[source_span]
        == best_for_target[target_span]
    ]


def align(
    source: ParsedSentence,
    target: ParsedSentence,
    similarity: Optional[numpy.ndarray] = None,
    similarity_threshold: float = 0.5,
) -> Dict:
    """The aligned-corpus record of one pair (`tft_allennlp.common.aligned_corpus`)."""
    links = link_words(source, target, similarity, similarity_threshold)
    return corpus_record(
        source.words,
        target.words,
        source.phrases,
        target.phrases,
        align_phrases(source, target, links),
    )
