import json

import pytest

from tests import FIXTURES_ROOT
from tft_allennlp.alignment.evaluation import (
    consistent,
    evaluate_word_alignment,
    parse_links,
    read_multimwa,
    read_word_alignment_gold,
)
from tft_allennlp.alignment.phrase_aligners import SyntacticPhraseAligner
from tft_allennlp.alignment.pipeline import evaluate_against_word_links, gold_format
from tft_allennlp.common.input_problems import MalformedInputError

SENTENCES = {
    "1_2": ("The cat sat down", "A cat was sitting"),
    "3_4": ("He left", "He departed"),
}
GOLD = [
    # The-A possible, cat-cat sure, sat-was possible, sat-sitting sure.
    {"id": "1_2", "source_length": 4, "target_length": 4, "sure": "1-1 2-3", "possible": "0-0 2-2"},
    {"id": "3_4", "source_length": 2, "target_length": 2, "sure": "0-0 1-1", "possible": "-"},
]


def write(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def test_consistency_needs_a_joining_link_and_no_sure_link_leaving():
    sure, possible = {(1, 1), (2, 3)}, {(1, 1), (2, 3), (0, 0), (2, 2)}
    assert consistent(((2, 3), (2, 3)), sure, possible)  # sat down ~ was sitting
    assert consistent(((0, 1), (1, 1)), sure, possible)  # a possible link may leave
    assert not consistent(((1, 2), (1, 1)), sure, possible)  # sat-sitting leaves the target
    assert not consistent(((3, 3), (0, 0)), sure, possible)  # no link joins down ~ A


def test_scores_against_hand_counted_values(tmp_path):
    golds = read_word_alignment_gold(write(tmp_path / "gold.jsonl", GOLD), SENTENCES, str.split)
    assert golds[0].source == ["The", "cat", "sat", "down"]
    assert golds[0].possible == {(1, 1), (2, 3), (0, 0), (2, 2)}
    predictions = [
        [
            ((1, 1), (1, 1)),  # cat ~ cat: identical, consistent
            ((2, 2), (3, 3)),  # sat ~ sitting: consistent
            ((2, 3), (2, 3)),  # sat down ~ was sitting: consistent
            ((0, 1), (1, 1)),  # The cat ~ cat: consistent
            ((1, 2), (1, 1)),  # cat sat ~ cat: the sure link sat-sitting leaves it
        ],
        [((0, 0), (0, 0))],  # He ~ He; left ~ departed missed
    ]
    scores = evaluate_word_alignment(golds, predictions)
    # Word links: cat-cat, sat-sitting, He-He, all sure; 4 sure links.
    assert scores["word_precision"] == 1.0
    assert scores["word_recall"] == 0.75
    assert scores["word_aer"] == pytest.approx(1 - 6 / 7)
    # 6 pairs, 5 consistent; 2 identical (both consistent), 4 others (3 consistent).
    assert scores["phrase_precision"] == pytest.approx(5 / 6)
    assert scores["phrase_precision_identical"] == 1.0
    assert scores["phrase_precision_non_identical"] == 0.75
    # Sure links covered by a consistent pair: cat-cat, sat-sitting, He-He, not left-departed;
    # of those between different words (sat-sitting, left-departed), one.
    assert scores["phrase_recall"] == 0.75
    assert scores["phrase_recall_non_identical"] == 0.5


def test_exact_pairs_need_every_content_word_linked_inside(tmp_path):
    golds = read_word_alignment_gold(write(tmp_path / "gold.jsonl", GOLD), SENTENCES, str.split)
    predictions = [
        [
            ((1, 1), (1, 1)),  # cat ~ cat: exact
            ((2, 2), (3, 3)),  # sat ~ sitting: exact
            ((2, 3), (2, 3)),  # sat down ~ was sitting: "down" is linked to nothing
            ((0, 1), (1, 1)),  # The cat ~ cat: "The" is no content word
            ((1, 2), (1, 1)),  # cat sat ~ cat: not even consistent
        ],
        [((0, 0), (0, 0))],  # He ~ He
    ]
    # Content words: cat, sat, down, sitting; He, left, departed.
    content = [
        ([False, True, True, True], [False, True, False, True]),
        ([True, True], [True, True]),
    ]
    scores = evaluate_word_alignment(golds, predictions, content)
    # 4 of 6 pairs exact; of the 4 non-identical ones, sat ~ sitting and The cat ~ cat.
    assert scores["exact_precision"] == pytest.approx(4 / 6)
    assert scores["exact_precision_non_identical"] == 0.5
    # Sure links inside an exact pair: cat-cat, sat-sitting, He-He of 4; sat-sitting of the
    # 2 between different words.
    assert scores["exact_recall"] == 0.75
    assert scores["exact_recall_non_identical"] == 0.5
    # The consistency scores are those of the test above, and without content no exact ones.
    assert scores["phrase_precision_non_identical"] == 0.75
    assert "exact_precision" not in evaluate_word_alignment(golds, predictions)


def test_bad_gold_names_the_file_and_line(tmp_path):
    with pytest.raises(ValueError, match="out of range"):
        parse_links("0-9", 2, 2)
    path = write(tmp_path / "bad.jsonl", [GOLD[0], {**GOLD[1], "sure": "0-0 5-1"}])
    with pytest.raises(MalformedInputError, match="bad.jsonl:2: link 5-1 is out of range"):
        read_word_alignment_gold(path, SENTENCES, str.split)
    path = write(tmp_path / "split.jsonl", [{**GOLD[0], "source_length": 5}])
    with pytest.raises(MalformedInputError, match="split.jsonl:1: .*4 and 4 words, annotated as 5"):
        read_word_alignment_gold(path, SENTENCES, str.split)
    path = write(tmp_path / "unknown.jsonl", [{**GOLD[0], "id": "9_9"}])
    with pytest.raises(MalformedInputError, match="unknown.jsonl:1: id 9_9 is not in"):
        read_word_alignment_gold(path, SENTENCES, str.split)
    inline = {"source": ["a", "b"], "target": ["a", "c"], "sure": "0-0", "possible": "1-1"}
    (gold,) = read_word_alignment_gold(write(tmp_path / "inline.jsonl", [inline]))
    assert (gold.sure, gold.possible) == ({(0, 0)}, {(0, 0), (1, 1)})
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(MalformedInputError, match="empty.jsonl"):
        read_word_alignment_gold(str(tmp_path / "empty.jsonl"))


MULTIMWA = FIXTURES_ROOT / "alignment/multimwa_sample.tsv"


def test_multimwa_lines_keep_their_tokens_and_links():
    flute, council = read_multimwa(str(MULTIMWA))
    assert flute.id == "0" and flute.target == ["a", "man", "plays", "the", "flute", "."]
    assert flute.sure == {(0, 0), (1, 1), (3, 2), (5, 4), (6, 5)}
    # P is the sure links and the possible-only ones of column 9.
    assert flute.possible == flute.sure | {(2, 2), (4, 3)}
    assert council.source == ["the", "council", "approved", "the", "plan", "yesterday"]
    assert council.possible - council.sure == {(2, 4)}


def test_bad_multimwa_lines_name_the_file_and_line(tmp_path):
    good = MULTIMWA.read_text().splitlines()[0]
    fields = good.split("\t")
    for bad, message in [
        ("\t".join(fields[:8]), "expected at least 9 tab-separated columns"),
        ("\t".join(fields[:1] + ["a  man"] + fields[2:]), "source sentence has an empty token"),
        ("\t".join(fields[:7] + ["0-0 9-1"] + fields[8:]), "link 9-1 is out of range"),
    ]:
        path = tmp_path / "bad.tsv"
        path.write_text(good + "\n" + bad + "\n")
        with pytest.raises(MalformedInputError, match=f"bad.tsv:2: {message}"):
            read_multimwa(str(path))


def test_word_f1_identical_coverage_and_given_word_links(tmp_path):
    golds = read_multimwa(str(MULTIMWA))
    # Flute: a ~ a, playing ~ plays, flute ~ flute; council: council ~ council.
    predictions = [
        [((0, 0), (0, 0)), ((3, 3), (2, 2)), ((5, 5), (4, 4))],
        [((1, 1), (8, 8))],
    ]
    scores = evaluate_word_alignment(golds, predictions)
    # 4 links, all sure; 11 sure links: P 1, R 4/11, F1 2PR/(P+R) = 8/15, AER 1 - 8/15.
    assert scores["word_recall"] == pytest.approx(4 / 11)
    assert scores["word_f1"] == pytest.approx(8 / 15)
    assert scores["word_aer"] == pytest.approx(7 / 15)
    # Sure links between identical words: a-a, man-man, flute-flute, .-. and the-the twice,
    # council, plan, yesterday: 9, of which a-a, flute-flute, council-council covered.
    assert scores["phrase_recall_identical"] == pytest.approx(3 / 9)
    # Different words: playing-plays (covered), approved-passed (not).
    assert scores["phrase_recall_non_identical"] == 0.5
    # Word links given apart from the pairs for the flute: playing ~ plays (sure) and is ~ the
    # (not even possible); council ~ council from the pairs: P 2/3, R 2/11.
    links = [{(3, 2), (2, 3)}, None]  # None: the pairs' single words stand for the links
    scores = evaluate_word_alignment(golds, predictions, word_links=links)
    assert scores["links"] == 3 and scores["links_in_possible"] == 2
    assert scores["word_precision"] == pytest.approx(2 / 3)
    assert scores["word_recall"] == pytest.approx(2 / 11)


def test_gold_layouts_are_recognised(tmp_path):
    assert gold_format(str(MULTIMWA)) == "multimwa"
    assert gold_format(write(tmp_path / "links.jsonl", GOLD)) == "word_links"
    assert gold_format(str(FIXTURES_ROOT / "alignment/gold.jsonl")) == "phrase_pairs"


def test_the_rule_based_aligner_on_multimwa_by_hand(pipeline):
    """`tft-align --evaluate` on MultiMWA's layout: the tokens stay as given (the test's links
    point at them), and every figure is counted by hand from `tft_syntactic`'s output: word links
    playing ~ plays, man ~ man, flute ~ flute; council ~ council, plan ~ plan, yesterday ~
    yesterday (all sure: 6 of 11 sure links); pairs "a man", "man", "is playing a flute" / "plays
    the flute", "playing" / "plays", "a flute" / "the flute", "flute"; "the council", "council",
    "the plan", "plan", "yesterday": 11 pairs, all consistent, 3 of them non-identical."""
    rules = pipeline.with_phrase_aligner(SyntacticPhraseAligner())
    scores = evaluate_against_word_links(str(MULTIMWA), rules)
    assert (scores["links"], scores["links_in_sure"], scores["sure"]) == (6, 6, 11)
    assert scores["word_f1"] == pytest.approx(12 / 17)
    assert scores["word_aer"] == pytest.approx(5 / 17)
    assert (scores["pairs"], scores["consistent"], scores["non_identical"]) == (11, 11, 3)
    assert scores["phrase_precision_non_identical"] == 1.0
    # Different words: playing-plays covered, approved-passed not; identical: all but ". ~ .".
    assert scores["phrase_recall_non_identical"] == 0.5
    assert scores["phrase_recall_identical"] == pytest.approx(8 / 9)
