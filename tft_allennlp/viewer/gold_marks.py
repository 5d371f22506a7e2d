"""
The verdicts of gold alignments on the shown pairs' alignments, for browsing an aligner's errors.

Gold is read as `allennlp tft-align --evaluate` reads it (`tft_allennlp.alignment.evaluation`):
word links (MultiMWA's TSV, or JSON lines with `sure` and `possible` links and the words) or
phrase pairs (the aligned corpus's JSON lines). A shown pair takes the gold pair with the same
text: the same characters, lower-cased, once the spaces between words are removed, so a pair that
`tft-align` split into words differently from the gold ("well-known" / "well - known") still
finds its gold, whose links are carried over to the shown words.

With word links, an alignment is `correct` when it is consistent with the gold (a gold link
joins its spans and no sure link leaves either), else `wrong`; the missed links are the sure
links that no correct alignment covers; precision and coverage are those of `tft-align
--evaluate` (`evaluate_word_alignment`). With phrase pairs, an alignment is `correct` when the
gold holds it, and the missed pairs are the gold pairs not aligned.
"""

import itertools
from typing import Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from tft_allennlp.alignment.evaluation import (
    Link,
    WordAlignmentGold,
    consistent,
    evaluate_word_alignment,
    read_multimwa,
    read_word_alignment_gold,
)
from tft_allennlp.alignment.pipeline import gold_format
from tft_allennlp.common.aligned_corpus import AlignedPair, PhrasePair, Span, parse_record
from tft_allennlp.common.input_problems import InputProblems, read_raw_lines

CORRECT, WRONG = "correct", "wrong"


class PairMarks(NamedTuple):
    """The gold's verdicts on one shown pair."""

    gold_id: str
    """The gold pair's id (MultiMWA's first column) or line number."""
    verdicts: List[str]
    """`correct` or `wrong`, for each alignment in order."""
    missed_links: List[Link]
    """Sure word links that no correct alignment covers (word-link gold)."""
    missed_pairs: List[PhrasePair]
    """Gold phrase pairs not aligned (phrase-pair gold)."""
    scores: Dict[str, float]
    """`precision` and `coverage`, and the counts behind them."""


class Gold:
    """
    The gold pairs of a file, found by their text.

    # Parameters

    path : `str`
        MultiMWA's TSV, word-link JSON lines with words, or aligned-corpus JSON lines.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.kind = "phrase_pairs" if gold_format(path) == "phrase_pairs" else "word_links"
        self._word_golds: Dict[Tuple[str, str], WordAlignmentGold] = {}
        self._phrase_golds: Dict[Tuple[str, str], AlignedPair] = {}
        if self.kind == "word_links":
            golds = (
                read_multimwa(path)
                if gold_format(path) == "multimwa"
                else read_word_alignment_gold(path)
            )
            for gold in golds:
                self._word_golds.setdefault(_text_key(gold.source, gold.target), gold)
        else:
            problems = InputProblems(path)
            for number, raw in read_raw_lines(path):
                if raw.strip():
                    record = parse_record(number, raw, problems)
                    assert record is not None  # a strict read raises on a bad line
                    key = _text_key(record.source, record.target)
                    self._phrase_golds.setdefault(key, record)
            problems.num_records = len(self._phrase_golds)
            problems.require_records("gold pairs", "it has no gold lines")

    def __len__(self) -> int:
        return len(self._word_golds) + len(self._phrase_golds)

    def marks(self, pair: AlignedPair) -> Optional[PairMarks]:
        """The verdicts on `pair`'s alignments, or None when the gold has no pair of its text."""
        key = _text_key(pair.source, pair.target)
        if key in self._word_golds:
            return _word_link_marks(pair, self.projected(pair))
        if key in self._phrase_golds:
            return _phrase_pair_marks(pair, self._phrase_golds[key])
        return None

    def projected(self, pair: AlignedPair) -> WordAlignmentGold:
        """The word-link gold of `pair`'s text, its links carried over to `pair`'s words."""
        gold = self._word_golds[_text_key(pair.source, pair.target)]
        source = _word_map(gold.source, pair.source)
        target = _word_map(gold.target, pair.target)

        def carried(links: Set[Link]) -> Set[Link]:
            return {(k, m) for i, j in links for k, m in itertools.product(source[i], target[j])}

        return WordAlignmentGold(
            gold.id, pair.source, pair.target, carried(gold.sure), carried(gold.possible)
        )

    def scores(self, pairs: Sequence[AlignedPair]) -> Dict[str, float]:
        """Precision and coverage over all of `pairs` that have gold (micro-averaged)."""
        with_gold = [pair for pair in pairs if self.marks(pair) is not None]
        if self.kind == "word_links":
            projected = [self.projected(pair) for pair in with_gold]
            scores = evaluate_word_alignment(projected, [p.alignments for p in with_gold])
            return _word_link_scores(scores)
        counts = {"pairs": 0.0, "correct": 0.0, "gold": 0.0, "covered": 0.0}
        for pair in with_gold:
            marks = self.marks(pair)
            assert marks is not None
            for key in counts:
                counts[key] += marks.scores[key]
        return _phrase_pair_scores(counts)


def _text_key(source: Sequence[str], target: Sequence[str]) -> Tuple[str, str]:
    """What a pair is found by: its two sentences lower-cased, without the spaces between
    words."""
    return "".join(word.lower() for word in source), "".join(word.lower() for word in target)


def _word_map(gold_words: Sequence[str], words: Sequence[str]) -> List[List[int]]:
    """For each gold word, the words of the same text (`words` joined is `gold_words` joined,
    lower-cased) that share a character with it."""
    if [word.lower() for word in gold_words] == [word.lower() for word in words]:
        return [[i] for i in range(len(words))]
    starts = list(itertools.accumulate((len(word.lower()) for word in words), initial=0))
    mapped, start = [], 0
    for word in gold_words:
        end = start + len(word.lower())
        mapped.append([k for k in range(len(words)) if starts[k] < end and start < starts[k + 1]])
        start = end
    return mapped


def _word_link_marks(pair: AlignedPair, gold: WordAlignmentGold) -> PairMarks:
    verdicts = [
        CORRECT if consistent(alignment, gold.sure, gold.possible) else WRONG
        for alignment in pair.alignments
    ]
    correct = [a for a, verdict in zip(pair.alignments, verdicts) if verdict == CORRECT]
    missed = sorted(
        (i, j)
        for i, j in gold.sure
        if not any(s[0] <= i <= s[1] and t[0] <= j <= t[1] for s, t in correct)
    )
    scores = _word_link_scores(evaluate_word_alignment([gold], [pair.alignments]))
    return PairMarks(gold.id, verdicts, missed, [], scores)


def _word_link_scores(scores: Dict[str, float]) -> Dict[str, float]:
    """Of `evaluate_word_alignment`'s scores, those a page shows."""
    return {
        "precision": scores["phrase_precision"],
        "precision_differing": scores["phrase_precision_non_identical"],
        "coverage": scores["phrase_recall"],
        "coverage_differing": scores["phrase_recall_non_identical"],
        "pairs": scores["pairs"],
        "correct": scores["consistent"],
        "sure": scores["sure"],
        "covered": scores["sure_covered"],
    }


def _phrase_pair_marks(pair: AlignedPair, gold: AlignedPair) -> PairMarks:
    source = _word_map(gold.source, pair.source)
    target = _word_map(gold.target, pair.target)

    def carried(span: Span, words: List[List[int]]) -> Span:
        return words[span[0]][0], words[span[1]][-1]

    expected = [(carried(s, source), carried(t, target)) for s, t in gold.alignments]
    expected = list(dict.fromkeys(expected))
    aligned = set(pair.alignments)
    verdicts = [CORRECT if alignment in set(expected) else WRONG for alignment in pair.alignments]
    missed = [alignment for alignment in expected if alignment not in aligned]
    counts = {
        "pairs": float(len(pair.alignments)),
        "correct": float(verdicts.count(CORRECT)),
        "gold": float(len(expected)),
        "covered": float(len(expected) - len(missed)),
    }
    return PairMarks(str(gold.line_number), verdicts, [], missed, _phrase_pair_scores(counts))


def _phrase_pair_scores(counts: Dict[str, float]) -> Dict[str, float]:
    return {
        "precision": counts["correct"] / counts["pairs"] if counts["pairs"] else 0.0,
        "coverage": counts["covered"] / counts["gold"] if counts["gold"] else 0.0,
        **counts,
    }
