"""
Scores an aligner against word-alignment gold: for each sentence pair, sure links S and
possible links P between word indices (P contains S), written `i-j` as in Pharaoh/Moses files.
Two layouts are read.

MultiMWA's own (Lan et al., 2021; `read_multimwa`), one tab-separated pair per line: an id,
sentence 1 (space-tokenized), `N/A`, sentence 2 (space-tokenized), `N/A`, two flags, the sure
links, the possible-only links, and trailing empty fields. The given tokens are the words.

The project's JSON lines (`read_word_alignment_gold`), one object per line:

    {"id": "3214358_3214672", "source_length": 19, "target_length": 21,
     "sure": "0-3 1-? ...", "possible": "2-7 ..."}

`sure` and `possible` are space-separated `i-j` links (`possible` lists the links that are
possible but not sure; P = sure + possible). The words are either in the line (`source`,
`target`: lists of words) or looked up by `id` in a GLUE pair file (`#1 ID_#2 ID` of MRPC) and
split as `allennlp tft-align` splits them; `source_length`/`target_length` then check that the
split is the annotated one. So gold for data that may not be redistributed holds no text.

Word level, for the aligner's word links A (the record's `word_links`; for an aligner that
writes none, its single-word phrase pairs): precision `|A & P| / |A|`, recall `|A & S| / |S|`,
their harmonic mean F1, and the alignment error rate `1 - (|A & S| + |A & P|) / (|A| + |S|)`
(Och & Ney, 2003).

Phrase level: a predicted phrase pair is *consistent* with the gold when a gold link (sure or
possible) joins its two spans and no sure link leaves either span (a sure link from a word
inside one span to a word outside the other). Precision is the fraction of predicted pairs that
are consistent, reported for all pairs, for identical pairs (the same words, ignoring case) and
for non-identical ones, which are what injection learns most from. Recall, or coverage, is the
fraction of sure links covered by a consistent predicted pair (both words inside it), for all
sure links, for those between identical words and for those between different words (the
coverage of non-identical pairs).

Consistency forgives a span that holds words the other side lacks ("the IDE development
community" / "the IDE community" is consistent when "development" is linked to nothing). So,
given which words are content words, a pair is also scored *exact*: consistent, and every
content word inside either span has a gold link into the other span, the criterion of a human
judge who accepts a pair only when its two phrases say the same thing. Exact precision and
recall are reported like the consistent ones.
"""

import csv
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

from tft_allennlp.common.aligned_corpus import PhrasePair
from tft_allennlp.common.input_problems import (
    InputProblems,
    parse_json,
    read_lines,
    read_raw_lines,
)

Link = Tuple[int, int]


class WordAlignmentGold(NamedTuple):
    id: str
    source: List[str]
    target: List[str]
    sure: Set[Link]
    possible: Set[Link]  # P: the sure links and the possible-only ones


def parse_links(text: str, source_length: int, target_length: int) -> Set[Link]:
    """`"0-1 2-3"` -> `{(0, 1), (2, 3)}`; `""` or `"-"` is empty; indices must be in range."""
    links: Set[Link] = set()
    for item in text.split():
        if item == "-":
            continue
        left, separator, right = item.partition("-")
        if not separator or not left.isdigit() or not right.isdigit():
            raise ValueError(f"{item!r} is not a link i-j")
        i, j = int(left), int(right)
        if i >= source_length or j >= target_length:
            raise ValueError(
                f"link {item} is out of range ({source_length} source, {target_length} target "
                "words)"
            )
        links.add((i, j))
    return links


# MultiMWA's columns: id, sentence 1, N/A, sentence 2, N/A, two flags, sure, possible, (empty).
MULTIMWA_COLUMNS = {"id": 0, "source": 1, "target": 3, "sure": 7, "possible": 8}


def read_multimwa(path: str) -> List[WordAlignmentGold]:
    """
    The gold pairs of a MultiMWA file (see the module's description), words as given: split at
    single spaces, so that link indices point at the annotated tokens. A line with too few
    columns, an empty token or a link out of range is an error naming `file:line`.
    """
    problems = InputProblems(path)
    golds = []
    for number, text in read_lines(path, problems):
        if not text.strip():
            continue
        fields = text.split("\t")
        try:
            if len(fields) <= MULTIMWA_COLUMNS["possible"]:
                raise ValueError(
                    f"expected at least {MULTIMWA_COLUMNS['possible'] + 1} tab-separated "
                    f"columns (MultiMWA), found {len(fields)}"
                )
            words = []
            for side in ("source", "target"):
                tokens = fields[MULTIMWA_COLUMNS[side]].split(" ")
                if not all(tokens):
                    raise ValueError(f"{side} sentence has an empty token (two spaces in a row?)")
                words.append(tokens)
            source, target = words
            sure = parse_links(fields[MULTIMWA_COLUMNS["sure"]], len(source), len(target))
            possible = parse_links(fields[MULTIMWA_COLUMNS["possible"]], len(source), len(target))
        except ValueError as error:
            problems.reject(number, str(error))
            continue
        identifier = fields[MULTIMWA_COLUMNS["id"]]
        golds.append(WordAlignmentGold(identifier, source, target, sure, sure | possible))
    if not golds:
        problems.require_records("gold pairs", "it has no gold lines")
    return golds


def glue_pair_sentences(path: str) -> Dict[str, Tuple[str, str]]:
    """`#1 ID_#2 ID` -> the two sentences of a GLUE pair file with ids (MRPC)."""
    sentences = {}
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader)
        columns = [header.index(name) for name in ("#1 ID", "#2 ID", "#1 String", "#2 String")]
        for row in reader:
            first, second, sentence1, sentence2 = (row[c] for c in columns)
            sentences[f"{first}_{second}"] = (sentence1, sentence2)
    return sentences


def read_word_alignment_gold(
    path: str,
    sentences: Optional[Dict[str, Tuple[str, str]]] = None,
    split_words: Optional[Callable[[str], List[str]]] = None,
) -> List[WordAlignmentGold]:
    """
    The gold pairs of `path`, words from the line or, by id, from `sentences` split with
    `split_words`. A malformed line, an unknown id or a split that differs from the annotated
    one is an error naming `file:line`.
    """
    problems = InputProblems(path)
    golds = []
    for number, raw in read_raw_lines(path):
        if not raw.strip():
            continue
        try:
            record = parse_json(raw.decode("utf-8"))
            if not isinstance(record, dict) or "sure" not in record:
                raise ValueError("expected an object with 'sure' (and 'possible') links")
            identifier = str(record.get("id", number))
            if "source" in record:
                source, target = list(record["source"]), list(record["target"])
            else:
                if sentences is None or split_words is None:
                    raise ValueError("no words, and no sentence file to look the id up in")
                if identifier not in sentences:
                    raise ValueError(f"id {identifier} is not in the sentence file")
                source, target = (split_words(text) for text in sentences[identifier])
                expected = (record.get("source_length"), record.get("target_length"))
                if expected != (len(source), len(target)):
                    raise ValueError(
                        f"the sentences split into {len(source)} and {len(target)} words, "
                        f"annotated as {expected[0]} and {expected[1]}: another tokenizer?"
                    )
            sure = parse_links(record["sure"], len(source), len(target))
            possible = parse_links(record.get("possible", ""), len(source), len(target))
        except (ValueError, KeyError, UnicodeDecodeError) as error:
            problems.reject(number, str(error))
            continue
        golds.append(WordAlignmentGold(identifier, source, target, sure, sure | possible))
    if not golds:
        problems.require_records("gold pairs", "it has no gold lines")
    return golds


def consistent(pair: PhrasePair, sure: Set[Link], possible: Set[Link]) -> bool:
    """A gold link joins the two spans, and no sure link leaves either of them."""
    (source_start, source_end), (target_start, target_end) = pair

    def in_source(i: int) -> bool:
        return source_start <= i <= source_end

    def in_target(j: int) -> bool:
        return target_start <= j <= target_end

    if not any(in_source(i) and in_target(j) for i, j in possible):
        return False
    return all(in_source(i) == in_target(j) for i, j in sure)


def _content_linked_inside(
    pair: PhrasePair, possible: Set[Link], content: Tuple[Sequence[bool], Sequence[bool]]
) -> bool:
    """Every content word of either span has a gold link into the other span."""
    (source_start, source_end), (target_start, target_end) = pair
    inside = [
        (i, j)
        for i, j in possible
        if source_start <= i <= source_end and target_start <= j <= target_end
    ]
    source_linked, target_linked = {i for i, _ in inside}, {j for _, j in inside}
    source_content, target_content = content
    return all(
        i in source_linked for i in range(source_start, source_end + 1) if source_content[i]
    ) and all(j in target_linked for j in range(target_start, target_end + 1) if target_content[j])


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def is_identical(pair: PhrasePair, source: List[str], target: List[str]) -> bool:
    (source_start, source_end), (target_start, target_end) = pair
    left = [word.lower() for word in source[source_start : source_end + 1]]
    return left == [word.lower() for word in target[target_start : target_end + 1]]


def evaluate_word_alignment(
    golds: Iterable[WordAlignmentGold],
    predictions: Iterable[List[PhrasePair]],
    content: Optional[Iterable[Tuple[Sequence[bool], Sequence[bool]]]] = None,
    word_links: Optional[Iterable[Optional[Set[Link]]]] = None,
) -> Dict[str, float]:
    """
    Word- and phrase-level scores (see the module's description) over all pairs; with
    `content` (per pair, which source and which target words are content words), the exact
    scores too. `word_links` are the aligner's word links per pair; where it is not given (or
    is None for a pair), the single-word pairs of `predictions` stand for them.
    """
    counts = dict.fromkeys(
        [
            "links",
            "links_in_possible",
            "links_in_sure",
            "sure",
            "pairs",
            "consistent",
            "identical",
            "identical_consistent",
            "sure_covered",
            "sure_identical",
            "sure_identical_covered",
            "sure_different",
            "sure_different_covered",
            "exact",
            "identical_exact",
            "sure_exact_covered",
            "sure_different_exact_covered",
        ],
        0,
    )
    contents = iter(content) if content is not None else None
    given_links = iter(word_links) if word_links is not None else None
    for gold, pairs in zip(golds, predictions):
        words = next(contents) if contents is not None else None
        links = next(given_links) if given_links is not None else None
        if links is None:
            links = {(s[0], t[0]) for s, t in pairs if s[0] == s[1] and t[0] == t[1]}
        counts["links"] += len(links)
        counts["links_in_possible"] += len(links & gold.possible)
        counts["links_in_sure"] += len(links & gold.sure)
        counts["sure"] += len(gold.sure)
        good = [pair for pair in pairs if consistent(pair, gold.sure, gold.possible)]
        counts["pairs"] += len(pairs)
        counts["consistent"] += len(good)
        # Exact pairs: the consistent ones whose content words are all linked inside.
        strict = [
            pair for pair in good if words and _content_linked_inside(pair, gold.possible, words)
        ]
        counts["exact"] += len(strict)
        for pair in pairs:
            if is_identical(pair, gold.source, gold.target):
                counts["identical"] += 1
                counts["identical_consistent"] += pair in good
                counts["identical_exact"] += pair in strict
        for i, j in gold.sure:
            covered = any(s[0] <= i <= s[1] and t[0] <= j <= t[1] for s, t in good)
            covered_exactly = any(s[0] <= i <= s[1] and t[0] <= j <= t[1] for s, t in strict)
            counts["sure_covered"] += covered
            counts["sure_exact_covered"] += covered_exactly
            if gold.source[i].lower() != gold.target[j].lower():
                counts["sure_different"] += 1
                counts["sure_different_covered"] += covered
                counts["sure_different_exact_covered"] += covered_exactly
            else:
                counts["sure_identical"] += 1
                counts["sure_identical_covered"] += covered
    word_precision = _ratio(counts["links_in_possible"], counts["links"])
    word_recall = _ratio(counts["links_in_sure"], counts["sure"])
    scores = {
        "word_precision": word_precision,
        "word_recall": word_recall,
        "word_f1": _ratio(2 * word_precision * word_recall, word_precision + word_recall),
        "word_aer": 1.0
        - _ratio(
            counts["links_in_sure"] + counts["links_in_possible"], counts["links"] + counts["sure"]
        ),
        **_pair_scores(counts, "phrase", "consistent", "covered"),
        "phrase_recall_identical": _ratio(
            counts["sure_identical_covered"], counts["sure_identical"]
        ),
        **{key: float(value) for key, value in counts.items()},
        "non_identical": float(counts["pairs"] - counts["identical"]),
        "non_identical_consistent": float(counts["consistent"] - counts["identical_consistent"]),
    }
    if content is not None:
        scores.update(_pair_scores(counts, "exact", "exact", "exact_covered"))
        scores["non_identical_exact"] = float(counts["exact"] - counts["identical_exact"])
    return scores


def _pair_scores(counts: Dict[str, int], name: str, kept: str, covered: str) -> Dict[str, float]:
    """Precision (all, identical, non-identical pairs) and recall (all sure links, those between
    different words) of the pairs counted as `kept` ("consistent" or "exact")."""
    different = counts["pairs"] - counts["identical"]
    return {
        f"{name}_precision": _ratio(counts[kept], counts["pairs"]),
        f"{name}_precision_identical": _ratio(counts[f"identical_{kept}"], counts["identical"]),
        f"{name}_precision_non_identical": _ratio(
            counts[kept] - counts[f"identical_{kept}"], different
        ),
        f"{name}_recall": _ratio(counts[f"sure_{covered}"], counts["sure"]),
        f"{name}_recall_non_identical": _ratio(
            counts[f"sure_different_{covered}"], counts["sure_different"]
        ),
    }
