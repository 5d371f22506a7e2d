"""
A parsed sentence as the aligners see it, and its syntactic phrases (rule 1 of the rule-based
aligner, `docs/alignment.md`):

Every content word (noun, proper noun, verb, adjective, adverb, number) is a single-word phrase.
Every token's subtree is a multi-word phrase when it spans two or more words (a constituent-like
phrase for projective parses), and so is the verb phrase of every word with a subject to its
left: from its first auxiliary or negation to its right edge. Punctuation is trimmed from the
edges, spans that are only function words are dropped, and the whole sentence is not a phrase
(that pair is the sentential paraphrase itself).
"""

from typing import TYPE_CHECKING, List, NamedTuple, Optional, Set

from tft_allennlp.common.aligned_corpus import Span

if TYPE_CHECKING:  # for annotations only
    import spacy.tokens

CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM"})
# Kinds of content words: a lemma or a synonym links words of one kind only.
WORD_KINDS = {"NOUN": "noun", "PROPN": "noun", "VERB": "verb", "ADJ": "adj", "ADV": "adv"}
WORD_KINDS["NUM"] = "number"
# Words that may only link by their form: amounts and names.
FORM_ONLY_POS = frozenset({"NUM", "PROPN"})
SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
VERB_PREFIX = frozenset({"aux", "auxpass", "neg"})


class ParsedSentence(NamedTuple):
    """What an aligner needs of a parsed sentence (picklable, unlike a spaCy `Doc`): the words,
    their lower-cased lemmas, coarse POS tags (Universal Dependencies), syntactic phrases and,
    from a parse, each word's head (its own index for the root)."""

    words: List[str]
    lemmas: List[str]
    pos: List[str]
    phrases: List[Span]
    heads: Optional[List[int]] = None


def parse_to_sentence(doc: "spacy.tokens.Doc") -> ParsedSentence:
    """Words, lemmas, coarse POS tags, syntactic phrases and heads of a spaCy `Doc`."""
    return ParsedSentence(
        [token.text for token in doc],
        [token.lemma_.lower() for token in doc],
        [token.pos_ for token in doc],
        syntactic_phrases(doc),
        [token.head.i for token in doc],
    )


def syntactic_phrases(doc: "spacy.tokens.Doc") -> List[Span]:
    """The phrases of a parsed sentence (the module's description), sorted."""
    pos = [token.pos_ for token in doc]
    content = [tag in CONTENT_POS for tag in pos]
    punctuation = [tag == "PUNCT" for tag in pos]

    def trimmed(start: int, end: int) -> Optional[Span]:
        while start <= end and punctuation[start]:
            start += 1
        while end >= start and punctuation[end]:
            end -= 1
        return (start, end) if start <= end else None

    sentence = trimmed(0, len(doc) - 1)
    phrases: Set[Span] = {(i, i) for i in range(len(doc)) if content[i]}
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
    return sorted(phrases)
