import json
import random
import string

import pytest
from allennlp.data.data_loaders import MultiProcessDataLoader

from tests import FIXTURES_ROOT
from tests.readers import corpus_reader
from tests.sharding import read_shards
from tests.tiny_bert import WORDS
from tft_allennlp.common.input_problems import MalformedInputError

CORPUS = str(FIXTURES_ROOT / "paraphrase/aligned.jsonl")
FLUTE_SOURCE = "A man is playing a flute .".split()
FLUTE_TARGET = "A man plays the flute .".split()


def spans(instance, field):
    return [(span.span_start, span.span_end) for span in instance[field].field_list]


def phrase_labels(instance):
    return [label.label for label in instance["phrase_labels"].field_list]


def summary(instance):
    """Everything that identifies an instance, as plain values."""
    return (
        instance["metadata"]["line_number"],
        instance["metadata"].metadata.get("partner_line_number", 0),
        instance["label"].label,
        tuple(spans(instance, "source_spans")),
        tuple(spans(instance, "target_spans")),
        tuple(phrase_labels(instance)),
    )


def corpus_lines():
    return [json.loads(line) for line in open(CORPUS)]


def test_word_spans_map_to_hand_checked_wordpiece_spans():
    # [CLS] a man is play ##ing a f ##lu ##te . [SEP] a man plays the f ##lu ##te . [SEP]
    #   0   1  2   3   4    5   6 7  8    9  10   11  12  13   14   15 16 17  18  19  20
    layout = corpus_reader().encoder.layout(FLUTE_SOURCE, FLUTE_TARGET)
    assert len(layout.tokens) == 21
    assert [t.type_id for t in layout.tokens] == [0] * 12 + [1] * 9
    assert layout.source_span((0, 1)) == (1, 2)
    assert layout.source_span((3, 5)) == (4, 9)  # "playing a flute": play ##ing a f ##lu ##te
    assert layout.source_span((4, 5)) == (6, 9)
    assert layout.source_span((0, 6)) == (1, 10)
    assert layout.target_span((0, 1)) == (12, 13)
    assert layout.target_span((2, 4)) == (14, 18)
    assert layout.target_span((0, 5)) == (12, 19)


def test_words_without_wordpieces_are_skipped_at_span_edges():
    # A zero-width space tokenizes to nothing.
    layout = corpus_reader().encoder.layout(["A", "\u200b", "man"], ["A", "man"])
    assert layout.source_span((1, 1)) is None
    assert layout.source_span((0, 2)) == (1, 2)
    assert layout.source_span((1, 2)) == (2, 2)


def test_truncation_drops_cut_phrases_and_counts_them(caplog):
    # Budget 12 - 3 = 9 pieces: the source keeps "a man is play ##ing", the target "a man plays
    # the". Only the alignment <A man, A man> survives; it has no in-paraphrase negative left.
    caplog.set_level("INFO")
    reader = corpus_reader(max_length=12)
    instance = next(iter(reader.read(CORPUS)))
    assert len(instance["tokens"].tokens) == 12
    assert spans(instance, "source_spans") == [(1, 2)]
    assert spans(instance, "target_spans") == [(7, 8)]
    assert phrase_labels(instance) == ["paraphrase"]
    list(reader.read(CORPUS))
    assert "phrase pairs dropped (cut by truncation or without wordpieces)" in caplog.text
    assert "aligned phrase pairs without an in-paraphrase negative" in caplog.text


def test_span_mapping_property_on_random_sentences():
    """Every mapped span covers exactly its words' pieces, inside its own sentence."""
    reader = corpus_reader(max_length=40)
    rng = random.Random(0)

    def word():
        if rng.random() < 0.6:
            return rng.choice(WORDS)
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(1, 9)))

    def text(pieces):
        return "".join(p.text[2:] if p.text.startswith("##") else p.text for p in pieces)

    for _ in range(200):
        source = [word() for _ in range(rng.randint(1, 15))]
        target = [word() for _ in range(rng.randint(1, 15))]
        layout = reader.encoder.layout(source, target)
        n = len(layout.tokens)
        separator = [i for i, t in enumerate(layout.tokens) if t.text == "[SEP]"][0]
        for _ in range(10):
            j = rng.randrange(len(source))
            k = rng.randrange(j, len(source))
            m = rng.randrange(len(target))
            o = rng.randrange(m, len(target))
            source_pieces, target_pieces = layout.source_span((j, k)), layout.target_span((m, o))
            if source_pieces is not None:
                assert 1 <= source_pieces[0] <= source_pieces[1] < separator
                covered = layout.tokens[source_pieces[0] : source_pieces[1] + 1]
                assert text(covered) == "".join(source[j : k + 1])
            if target_pieces is not None:
                assert separator < target_pieces[0] <= target_pieces[1] <= n - 2
                covered = layout.tokens[target_pieces[0] : target_pieces[1] + 1]
                assert text(covered) == "".join(target[m : o + 1])
            # All words have pieces here, so a span is dropped exactly when truncation cut
            # the pieces of its last word.
            kept = reader.encoder.join(
                reader.encoder.word_pieces(source).pieces, reader.encoder.word_pieces(target).pieces
            ).lengths
            source_end = reader.encoder.word_pieces(source).word_spans[k][1]
            target_end = reader.encoder.word_pieces(target).word_spans[o][1]
            assert (source_pieces is None) == (source_end >= kept[0])
            assert (target_pieces is None) == (target_end >= kept[1])


def test_negatives_follow_the_paper():
    lines = corpus_lines()
    instances = list(corpus_reader().read(CORPUS))
    paraphrases = [i for i in instances if i["label"].label == "paraphrase"]
    randoms = [i for i in instances if i["label"].label == "random"]
    assert len(paraphrases) == len(randoms) == len(lines) == 12
    reader = corpus_reader()
    for instance in paraphrases:
        record = lines[instance["metadata"]["line_number"] - 1]
        layout = reader.encoder.layout(record["source"], record["target"])
        aligned = {
            (layout.source_span(tuple(s)), layout.target_span(tuple(t)))
            for s, t in record["alignments"]
        }
        pairs = list(zip(spans(instance, "source_spans"), spans(instance, "target_spans")))
        labels = phrase_labels(instance)
        # Every alignment is a paraphrase pair, and each has one in-paraphrase negative.
        assert {pair for pair, label in zip(pairs, labels) if label == "paraphrase"} == aligned
        assert labels.count("in_paraphrase") == labels.count("paraphrase")
        for (source, target), label in zip(pairs, labels):
            if label == "in_paraphrase":
                # never a target phrase aligned to this source phrase
                assert (source, target) not in aligned
                assert all(t != target for s, t in aligned if s == source)
                assert target in {layout.target_span(tuple(t)) for t in record["target_phrases"]}
    for instance in randoms:
        own = instance["metadata"]["line_number"]
        partner = instance["metadata"]["partner_line_number"]
        assert partner != own
        assert instance["metadata"]["target"] == lines[partner - 1]["target"]
        assert instance["metadata"]["target"] != lines[own - 1]["target"]
        # every source phrase (inventory plus aligned spans) meets a random phrase of t'
        assert set(phrase_labels(instance)) == {"random"}
        record = lines[own - 1]
        inventory = {tuple(s) for s in record["source_phrases"]}
        assert len(phrase_labels(instance)) == len(inventory)


def test_same_seed_same_instances_other_seed_other_negatives():
    first = [summary(i) for i in corpus_reader(seed=3).read(CORPUS)]
    again = [summary(i) for i in corpus_reader(seed=3).read(CORPUS)]
    other = [summary(i) for i in corpus_reader(seed=4).read(CORPUS)]
    assert first == again
    assert first != other


def test_binary_mode_and_phrase_pair_cap():
    instances = list(corpus_reader(binary=True).read(CORPUS))
    labels = {label for i in instances for label in phrase_labels(i) if label != -1}
    assert labels == {"paraphrase", "in_paraphrase"}
    for instance in instances:
        if instance["label"].label == "random":
            assert spans(instance, "source_spans") == [(-1, -1)]  # padding only
    capped = list(corpus_reader(max_phrase_pairs=3).read(CORPUS))
    assert max(len(spans(i, "source_spans")) for i in capped) == 3


def test_more_random_pairs_per_paraphrase():
    instances = list(
        corpus_reader(
            negative_sampler={"type": "tft_paper", "random_pairs_per_paraphrase": 2}
        ).read(CORPUS)
    )
    randoms = [i for i in instances if i["label"].label == "random"]
    assert len(randoms) == 24
    for line in range(1, 13):
        partners = [
            i["metadata"]["partner_line_number"]
            for i in randoms
            if i["metadata"]["line_number"] == line
        ]
        assert len(set(partners)) == 2


def test_train_and_validation_parts_split_the_corpus():
    def lines_of(part):
        reader = corpus_reader(part=part, validation_fraction=0.25)
        return {i["metadata"]["line_number"] for i in reader.read(CORPUS)}

    train, validation = lines_of("train"), lines_of("validation")
    assert train | validation == set(range(1, 13))
    assert not train & validation and validation


def test_sharding_reads_each_pair_once_with_the_same_negatives(monkeypatch):
    expected = sorted(summary(i) for i in corpus_reader(buffer_size=3).read(CORPUS))
    shards = read_shards(monkeypatch, lambda: corpus_reader(buffer_size=3), CORPUS)
    # 12 lines in 4 blocks of 3. Blocks alternate between the two loader workers, lines of a
    # block between the two ranks: rank 0 reads lines 1 3 | 5 | 7 9 | 11 (0-based 0 2 4 6 8 10),
    # rank 1 the others, so each rank reads 6 lines, a paraphrase and a random instance each.
    assert [len(shard) for shard in shards] == [8, 4, 4, 8]
    rank0_lines = sorted(i["metadata"]["line_number"] for shard in shards[:2] for i in shard)
    assert rank0_lines == sorted(2 * [1, 3, 5, 7, 9, 11])
    assert sorted(summary(i) for shard in shards for i in shard) == expected
    # The count, made without tokenizing, is what each rank reads.
    assert corpus_reader(buffer_size=3).count_instances(CORPUS, 2) == [12, 12]
    assert corpus_reader(buffer_size=3).count_instances(CORPUS, 5) == [6, 6, 4, 4, 4]


def test_a_last_block_of_one_line_joins_the_previous_block():
    # 12 lines in blocks of 11: the 12th line would have no partner on its own.
    instances = list(corpus_reader(buffer_size=11).read(CORPUS))
    assert sum(i["label"].label == "random" for i in instances) == 12


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"source": ["a"], "target": ["b"]', "invalid JSON"),
        ('{"source": [], "target": ["b"]}', "'source' must be a non-empty list of words"),
        ('{"source": ["a", "b"], "target": ["c"], "source_phrases": [[1, 0]]}', "reversed span"),
        ('{"source": ["a"], "target": ["c"], "target_phrases": [[0, 3]]}', "span out of range"),
        ('{"source": ["a"], "target": ["c"], "alignments": [[[0, 0]]]}', "malformed alignment"),
        ('["a", "b"]', "expected a JSON object"),
        ('{"source": ["\\u200b", "\\u008a"], "target": ["c"]}', "only invisible characters"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, line, message):
    path = tmp_path / "corpus.jsonl"
    first, second = open(CORPUS).readlines()[:2]
    path.write_text(first + second + line + "\n")
    with pytest.raises(MalformedInputError, match=rf"corpus.jsonl:3: .*{message}"):
        list(corpus_reader().read(str(path)))
    lenient = list(corpus_reader(lenient=True).read(str(path)))
    assert len(lenient) == 4  # the two good lines, each with a random pair


def test_a_word_of_invisible_characters_gets_no_wordpiece_and_the_rest_is_read():
    # A stray C1 control character (as in a line of ParaSCI), tokenized as a word of its own.
    reader = corpus_reader()
    instance = reader.text_to_instance(
        ["A", "\x8a", "flute", "plays"], ["a", "flute", "is", "played"], [((2, 3), (1, 3))]
    )
    plain = reader.text_to_instance(
        ["A", "flute", "plays"], ["a", "flute", "is", "played"], [((1, 2), (1, 3))]
    )
    tokens = [token.text for token in instance["tokens"].tokens]
    assert tokens == [token.text for token in plain["tokens"].tokens]
    assert spans(instance, "source_spans") == spans(plain, "source_spans")
    assert spans(instance, "target_spans") == spans(plain, "target_spans")


def test_text_to_instance_for_prediction():
    reader = corpus_reader()
    instance = reader.text_to_instance(
        FLUTE_SOURCE, FLUTE_TARGET, [((3, 5), (2, 4)), ((0, 1), (3, 4))]
    )
    assert spans(instance, "source_spans") == [(4, 9), (1, 2)]
    assert spans(instance, "target_spans") == [(14, 18), (15, 18)]
    assert "label" not in instance.fields and "phrase_labels" not in instance.fields
    assert instance["metadata"]["phrase_pairs"] == [((3, 5), (2, 4)), ((0, 1), (3, 4))]


def test_multi_process_loader_yields_each_instance_once():
    """A real `MultiProcessDataLoader` with two workers reads what one process reads."""
    expected = sorted(summary(i) for i in corpus_reader(buffer_size=3).read(CORPUS))
    loader = MultiProcessDataLoader(
        corpus_reader(buffer_size=3), str(CORPUS), batch_size=4, num_workers=2
    )
    assert sorted(summary(i) for i in loader.iter_instances()) == expected
    assert len(expected) == 24


def test_an_empty_corpus_or_part_is_an_error_naming_the_file(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    for reader in (corpus_reader(), corpus_reader(part="validation", validation_fraction=0.5)):
        with pytest.raises(MalformedInputError, match="empty.jsonl: no aligned pairs to read: "):
            list(reader.read(str(empty)))
        with pytest.raises(MalformedInputError, match="the file has no non-blank lines"):
            reader.count_instances(str(empty))
    # The 12-line fixture puts none of its lines in a 5% validation part (line-seeded draws).
    small = corpus_reader(part="validation", validation_fraction=0.05)
    message = r"aligned.jsonl: .*none of its 12 lines falls in the 'validation' part"
    with pytest.raises(MalformedInputError, match=message):
        list(small.read(CORPUS))
    with pytest.raises(MalformedInputError, match=message):
        small.count_instances(CORPUS, world_size=2)
    assert len(list(corpus_reader(part="train", validation_fraction=0.05).read(CORPUS))) == 24


def test_a_lenient_read_that_skipped_every_line_says_so(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"source": ["a"]}\nnot json\n')
    message = r"corpus.jsonl: no valid aligned pairs: all 2 were malformed and skipped"
    with pytest.raises(MalformedInputError, match=message):
        list(corpus_reader(lenient=True).read(str(path)))
    with pytest.raises(MalformedInputError, match=message):
        corpus_reader(lenient=True).count_instances(str(path), world_size=2)
