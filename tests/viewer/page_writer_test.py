import json

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader

from tests import FIXTURES_ROOT
from tests.viewer import page_elements, pair_links, select, span
from tft_allennlp.common.input_problems import MalformedInputError
from tft_allennlp.viewer.page_writer import write_page
from tft_allennlp.viewer.shown_pairs import read_shown_pairs

CORPUS = FIXTURES_ROOT / "paraphrase/aligned.jsonl"
RECORDS = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]


def _alignments(elements, section_id):
    links = pair_links(elements, section_id)
    return [link for link in links if link.attributes["data-label"] == "paraphrase"]


def _spans(link):
    return span(link.attributes["data-source"]), span(link.attributes["data-target"])


def test_a_pair_element_per_pair_and_a_link_per_alignment(tmp_path):
    page = tmp_path / "page.html"
    summary = write_page(str(CORPUS), str(page), limit=5, seed=None)
    text = page.read_text()
    elements = page_elements(text)
    sections = select(elements, "section", "pair")
    assert [s.attributes["data-line"] for s in sections] == ["1", "2", "3", "4", "5"]
    for section, record in zip(sections, RECORDS):
        links = pair_links(elements, section.attributes["id"])
        aligned = [_spans(link) for link in links if link.attributes["data-label"] == "paraphrase"]
        assert aligned == [(tuple(s), tuple(t)) for s, t in record["alignments"]]
        for link in links:
            (s0, s1), (t0, t1) = _spans(link)
            same = [w.lower() for w in record["source"][s0 : s1 + 1]] == [
                w.lower() for w in record["target"][t0 : t1 + 1]
            ]
            assert link.attributes["data-relation"] == ("identical" if same else "differing")
            assert "data-probabilities" not in link.attributes  # no model given
        # Each side's words, in order, and a bar per phrase span the links use.
        words = [w for w in select(elements, "span", "w") if w.within("section", "pair") is section]
        assert len(words) >= len(record["source"]) + len(record["target"])
        bars = {
            (bar.attributes["data-side"], span(bar.attributes["data-span"]))
            for bar in select(elements, "path", "bar")
            if bar.within("section", "pair") is section
            and "pair" in bar.within("div", "figure").classes
        }
        assert bars == {("source", s) for s, _ in map(_spans, links)} | {
            ("target", t) for _, t in map(_spans, links)
        }
    alignments = [len(record["alignments"]) for record in RECORDS[:5]]
    assert summary["pairs shown"] == 5
    assert summary["alignments per pair"] == round(sum(alignments) / 5, 2)
    # Self-contained: nothing is fetched when the page is opened.
    assert "src=" not in text and 'href="http' not in text and "@import" not in text


def test_the_labels_are_the_injection_readers(tmp_path, tiny_bert):
    """With every line shown (one block of the reader), the page's phrase pairs, labels and
    random partners are the instances that `tft_aligned_paraphrases` reads from the corpus."""
    page = tmp_path / "page.html"
    write_page(str(CORPUS), str(page), limit=len(RECORDS), seed=None)
    elements = page_elements(page.read_text())
    tokenizer = {"type": "tft_pretrained_transformer", "model_name": tiny_bert}
    reader = DatasetReader.from_params(
        Params(
            {
                "type": "tft_aligned_paraphrases",
                "tokenizer": {**tokenizer, "add_special_tokens": False},
            }
        )
    )
    for instance in reader.read(str(CORPUS)):
        metadata = instance["metadata"].metadata
        section = f"pair-{metadata['line_number']}"
        expected = [
            (pair, label.label)
            for pair, label in zip(metadata["phrase_pairs"], instance["phrase_labels"])
        ]
        if instance["label"].label == "paraphrase":
            links = pair_links(elements, section)
        else:
            details = [
                d
                for d in select(elements, "details", "random-pair")
                if d.within("section", "pair").attributes["id"] == section
            ]
            assert [int(d.attributes["data-partner-line"]) for d in details] == [
                metadata["partner_line_number"]
            ]
            links = pair_links(elements, section, "random")
        assert [(_spans(link), link.attributes["data-label"]) for link in links] == expected


def test_a_sample_is_seeded_and_in_file_order():
    first = read_shown_pairs(str(CORPUS), 4)
    assert [pair.line_number for pair in first.pairs] == [1, 2, 3, 4]
    assert first.read is None
    drawn = read_shown_pairs(str(CORPUS), 4, seed=1)
    lines = [pair.line_number for pair in drawn.pairs]
    assert lines == sorted(lines) and len(set(lines)) == 4 and drawn.read == len(RECORDS)
    assert [p.line_number for p in read_shown_pairs(str(CORPUS), 4, seed=1).pairs] == lines
    samples = [read_shown_pairs(str(CORPUS), 4, seed).pairs for seed in range(5)]
    assert len({tuple(pair.line_number for pair in sample) for sample in samples}) > 1
    assert len(read_shown_pairs(str(CORPUS), 100, seed=3).pairs) == len(RECORDS)


# Two sentences that tft-align split otherwise than the gold did ("well-known" is one word
# here, three in the gold).
PAIR = {
    "source": ["well-known", "writers", "met"],
    "target": ["famous", "writers", "met"],
    "alignments": [[[0, 0], [0, 0]], [[1, 1], [1, 1]], [[0, 1], [0, 0]]],
}
# MultiMWA's columns: id, sentence 1, N/A, sentence 2, N/A, two flags, sure, possible links.
MULTIMWA = "7\twell - known writers met\tN/A\tfamous writers met\tN/A\t1\t1\t" + (
    "0-0 1-0 2-0 3-1 4-2\t\t\n"
)


def test_gold_marks_correct_wrong_and_missed_links(tmp_path):
    aligned = tmp_path / "aligned.jsonl"
    aligned.write_text(json.dumps(PAIR) + "\n" + json.dumps(RECORDS[0]) + "\n")
    gold = tmp_path / "gold.tsv"
    gold.write_text(MULTIMWA)
    page = tmp_path / "page.html"
    summary = write_page(str(aligned), str(page), gold=str(gold), seed=None)
    elements = page_elements(page.read_text())
    section, without_gold = select(elements, "section", "pair")
    links = _alignments(elements, "pair-1")
    # "well-known writers" / "famous": the sure link writers-writers leaves the pair.
    assert [link.attributes["data-gold"] for link in links] == ["correct", "correct", "wrong"]
    missed = [
        (span(m.attributes["data-source"]), span(m.attributes["data-target"]))
        for m in select(elements, "g", "missed")
    ]
    assert missed == [((2, 2), (2, 2))]  # met-met: no alignment covers it
    assert float(section.attributes["data-precision"]) == pytest.approx(2 / 3)
    assert float(section.attributes["data-coverage"]) == pytest.approx(2 / 3)
    assert section.attributes["data-gold-id"] == "7" and section.attributes["data-errors"] == "1"
    assert "data-precision" not in without_gold.attributes
    assert summary["pairs with gold"] == 1 and summary["wrong alignments"] == 1
    assert summary["gold precision"] == 0.667 and summary["missed gold links"] == 1
    # Gold phrase pairs (the aligned corpus's layout), found and carried over the same way.
    phrase_gold = tmp_path / "gold.jsonl"
    words = {"source": ["well", "-", "known", "writers", "met"], "target": PAIR["target"]}
    phrase_gold.write_text(
        json.dumps({**words, "alignments": [[[0, 2], [0, 0]], [[4, 4], [2, 2]]]})
    )
    write_page(str(aligned), str(page), gold=str(phrase_gold), seed=None, force=True)
    elements = page_elements(page.read_text())
    links = _alignments(elements, "pair-1")
    assert [link.attributes["data-gold"] for link in links] == ["correct", "wrong", "wrong"]
    assert [m.attributes["data-source"] for m in select(elements, "g", "missed")] == ["2 2"]


def test_bad_input_is_named_by_file_and_line(tmp_path):
    aligned = tmp_path / "aligned.jsonl"
    aligned.write_text(json.dumps(PAIR) + "\n\n" + json.dumps({**PAIR, "target": []}) + "\n")
    with pytest.raises(MalformedInputError, match=f"^{aligned}:3: malformed record: 'target'"):
        write_page(str(aligned), str(tmp_path / "page.html"))
    assert not (tmp_path / "page.html").exists()
    gold = tmp_path / "gold.tsv"
    gold.write_text(MULTIMWA + "8\tsome words\tN/A\tother words\tN/A\t1\t1\t0-9\t\t\n")
    aligned.write_text(json.dumps(PAIR) + "\n")
    with pytest.raises(MalformedInputError, match=f"^{gold}:2: link 0-9 is out of range"):
        write_page(str(aligned), str(tmp_path / "page.html"), gold=str(gold))
