"""Hand-made parsed sentences for the aligner's tests, and the two rule-based aligners."""

from tft_allennlp.alignment.pair_rules import ClosestInLength, SameContent, phrase_pairs
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.alignment.phrase_aligners import (
    SyntacticBasicPhraseAligner,
    SyntacticPhraseAligner,
)

# The default aligner's rules, and the basic ones.
CHECKED = SyntacticPhraseAligner()
BASIC = SyntacticBasicPhraseAligner()


def sentence(text, lemmas=None, pos=None, phrases=()):
    """Words split at spaces, lemmas the lower-cased words and every word a noun unless given."""
    words = text.split()
    return ParsedSentence(
        words,
        lemmas or [w.lower() for w in words],
        pos or ["NOUN"] * len(words),
        sorted(phrases),
    )


def two_words(text, pos):
    """A two-word phrase whose words are single-word phrases too."""
    return sentence(text, pos=pos, phrases=[(0, 1), (0, 0), (1, 1)])


def with_content_check(source, target, links):
    """The pairs of `links` under rules 4 and 6, without rule 5."""
    return phrase_pairs(source, target, links, [SameContent(), ClosestInLength()])


def show(record):
    """A record's aligned pairs as text."""
    source, target = record["source"], record["target"]
    return [
        (" ".join(source[s[0] : s[1] + 1]), " ".join(target[t[0] : t[1] + 1]))
        for s, t in record["alignments"]
    ]
