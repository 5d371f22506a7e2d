import os
import random

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader
from allennlp.data.data_loaders import MultiProcessDataLoader
from allennlp.data.fields import LabelField, TensorField

from tests import CONFIGS_ROOT, FIXTURES_ROOT
from tests.readers import glue_reader
from tests.sharding import read_shards
from tft_allennlp.common.glue_tasks import GLUE_TASKS
from tft_allennlp.common.input_problems import InputProblems, MalformedInputError
from tft_allennlp.dataset_readers.glue_rows import glue_rows, is_header

GLUE = FIXTURES_ROOT / "glue"

FLUTE = "a man is play ##ing a f ##lu ##te ."


def texts(instance):
    return " ".join(token.text for token in instance["tokens"].tokens)


# task, file, number of instances, first instance's wordpieces, first label (None: unlabelled)
CASES = [
    ("cola", "CoLA/train.tsv", 6, "[CLS] the cat sat on the mat . [SEP]", "1"),
    ("cola", "CoLA/dev.tsv", 4, "[CLS] the children are reading books . [SEP]", "1"),
    ("cola", "CoLA/test.tsv", 3, "[CLS] the cat sat on the mat . [SEP]", None),
    ("sst2", "SST-2/train.tsv", 6, "[CLS] a warm and funny film [SEP]", "1"),
    ("sst2", "SST-2/test.tsv", 3, "[CLS] a warm and funny film [SEP]", None),
    ("mrpc", "MRPC/train.tsv", 10, f"[CLS] {FLUTE} [SEP] a man plays the f ##lu ##te . [SEP]", "1"),
    (
        "mrpc",
        "MRPC/dev.tsv",
        5,
        "[CLS] a woman is cutting an onion . [SEP] a woman is slicing an onion . [SEP]",
        "1",
    ),
    ("mrpc", "MRPC/test.tsv", 3, f"[CLS] {FLUTE} [SEP] a man plays the f ##lu ##te . [SEP]", None),
    (
        "stsb",
        "STS-B/train.tsv",
        10,
        f"[CLS] {FLUTE} [SEP] a man plays the f ##lu ##te . [SEP]",
        4.8,
    ),
    ("stsb", "STS-B/test.tsv", 3, f"[CLS] {FLUTE} [SEP] a man plays the f ##lu ##te . [SEP]", None),
    (
        "qqp",
        "QQP/dev.tsv",
        4,
        "[CLS] what is the best phone to buy ? [SEP] which phone should i buy ? [SEP]",
        "1",
    ),
    (
        "mnli",
        "MNLI/train.tsv",
        6,
        f"[CLS] {FLUTE} [SEP] a man is making music . [SEP]",
        "entailment",
    ),
    (
        "mnli",
        "MNLI/dev_matched.tsv",
        3,
        f"[CLS] {FLUTE} [SEP] a man is making music . [SEP]",
        "entailment",
    ),
    (
        "mnli",
        "MNLI/dev_mismatched.tsv",
        3,
        "[CLS] two dogs are running in the park . [SEP] animals are outside . [SEP]",
        "entailment",
    ),
    (
        "mnli",
        "MNLI/test_matched.tsv",
        2,
        f"[CLS] {FLUTE} [SEP] a man is making music . [SEP]",
        None,
    ),
    (
        "qnli",
        "QNLI/train.tsv",
        4,
        "[CLS] who wrote the report ? [SEP] the report was written by the finance team . [SEP]",
        "entailment",
    ),
    (
        "rte",
        "RTE/train.tsv",
        4,
        "[CLS] a man is play ##ing a f ##lu ##te in the street . [SEP] "
        "a man is play ##ing an instrument . [SEP]",
        "entailment",
    ),
    ("wnli", "WNLI/dev.tsv", 3, None, "0"),
]


@pytest.mark.parametrize("task, path, count, first_tokens, first_label", CASES)
def test_reads_every_official_layout(task, path, count, first_tokens, first_label):
    instances = list(glue_reader(task).read(str(GLUE / path)))
    assert len(instances) == count
    first = instances[0]
    if first_tokens is not None:
        assert texts(first) == first_tokens
    if first_label is None:
        assert "label" not in first.fields
    elif isinstance(first_label, float):
        assert isinstance(first["label"], TensorField)
        assert first["label"].tensor.item() == pytest.approx(first_label)
    else:
        assert isinstance(first["label"], LabelField)
        assert first["label"].label == first_label


def test_pair_segment_ids_and_metadata():
    reader = glue_reader("mrpc")
    first = next(iter(reader.read(str(GLUE / "MRPC/test.tsv"))))
    # [CLS] + 10 wordpieces + [SEP] in segment 0; 8 wordpieces + [SEP] in segment 1.
    assert [token.type_id for token in first["tokens"].tokens] == [0] * 12 + [1] * 9
    assert first["metadata"]["index"] == "0"
    assert first["metadata"]["line_number"] == 2
    assert first["metadata"]["sentence2"] == "A man plays the flute."


def test_stray_quote_is_kept_as_text():
    instances = list(glue_reader("mrpc").read(str(GLUE / "MRPC/dev.tsv")))
    assert texts(instances[-1]) == (
        '[CLS] he called it " the best day . [SEP] the shop was closed . [SEP]'
    )


def test_single_sentence_tasks_have_one_segment():
    instance = next(iter(glue_reader("cola").read(str(GLUE / "CoLA/train.tsv"))))
    assert {token.type_id for token in instance["tokens"].tokens} == {0}
    assert instance["metadata"]["sentence2"] is None


@pytest.mark.parametrize(
    "first_line, header",
    [
        ("gj04\t1\t\tsentence", False),  # CoLA's layout, a sentence that is the word "sentence"
        ("gj04\t0\t*\tlabel", False),
        ("fx01\t1\t\tThe cat sat on the mat.", False),
        ("source\tlabel\tauthor_label\tsentence", True),  # its four columns, named
        ("index\tsentence", True),  # the test file's header
        ("index\tsentence\tlabel", True),  # not CoLA's layout: a header (then checked)
    ],
)
def test_a_cola_header_is_told_by_the_layout(first_line, header):
    assert is_header(GLUE_TASKS["cola"], first_line.split("\t")) is header


def test_headerless_cola_whose_first_sentence_is_the_word_sentence(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text("gj04\t0\t*\tsentence\n" + (GLUE / "CoLA/train.tsv").read_text())
    instances = list(glue_reader("cola").read(str(path)))
    assert len(instances) == 7
    assert instances[0]["metadata"]["sentence1"] == "sentence"
    assert instances[0]["metadata"]["line_number"] == 1
    assert [i["label"].label for i in instances] == ["0", "1", "0", "1", "0", "1", "0"]
    # The same rows under a header of CoLA's four columns: the header is not a row.
    path.write_text("source\tlabel\tauthor_label\tsentence\n" + path.read_text())
    assert [i["metadata"]["sentence1"] for i in glue_reader("cola").read(str(path))] == [
        i["metadata"]["sentence1"] for i in instances
    ]


def test_a_header_with_another_column_count_must_name_the_sentence(tmp_path):
    path = tmp_path / "test.tsv"
    path.write_text("id\ttext\n0\tThe cat sat.\n")
    with pytest.raises(ConfigurationError, match=r"test.tsv:1: expected a cola header"):
        list(glue_reader("cola").read(str(path)))


def test_malformed_row_names_file_and_line():
    with pytest.raises(MalformedInputError, match=r"QQP/train.tsv:5: wrong field count"):
        list(glue_reader("qqp").read(str(GLUE / "QQP/train.tsv")))


def test_lenient_reading_skips_and_counts(caplog):
    instances = list(glue_reader("qqp", lenient=True).read(str(GLUE / "QQP/train.tsv")))
    assert [i["metadata"]["index"] for i in instances] == ["0", "1", "2", "3", "4", "5"]
    assert "Skipped 2 malformed rows" in caplog.text
    assert "1 wrong field count" in caplog.text and "1 empty sentence" in caplog.text


def test_unknown_label_and_bad_header(tmp_path):
    bad_label = tmp_path / "rte.tsv"
    bad_label.write_text("index\tsentence1\tsentence2\tlabel\n0\tA b.\tC d.\tmaybe\n")
    with pytest.raises(MalformedInputError, match=r"rte.tsv:2: unknown label: 'maybe'"):
        list(glue_reader("rte").read(str(bad_label)))
    wrong_task = str(GLUE / "SST-2/train.tsv")
    with pytest.raises(ConfigurationError, match=r"train.tsv:1: expected a rte header"):
        list(glue_reader("rte").read(wrong_task))


def test_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_bytes(
        b"index\tsentence1\tsentence2\tlabel\n0\tok\tfine\tentailment\n1\t\xff\tx\tentailment\n"
    )
    with pytest.raises(MalformedInputError, match=r"bad.tsv:3: invalid UTF-8"):
        list(glue_reader("rte").read(str(path)))
    assert len(list(glue_reader("rte", lenient=True).read(str(path)))) == 1


def test_truncation_is_longest_first_and_counted(caplog):
    # Pair budget = 12 - 3 special tokens = 9. "a man is play ##ing a f ##lu ##te ." (10) and
    # "a man plays the f ##lu ##te ." (8): the longer one loses pieces until both are 5 long,
    # then the second one loses the tie: 5 + 4.
    reader = glue_reader("mrpc", max_length=12)
    instances = list(reader.read(str(GLUE / "MRPC/train.tsv")))
    first = instances[0]
    assert texts(first) == "[CLS] a man is play ##ing [SEP] a man plays the [SEP]"
    assert len(first["tokens"].tokens) == 12
    # Every fixture pair has more than 9 wordpieces.
    assert "Truncated 10 of 10 examples" in caplog.text
    assert all(len(instance["tokens"].tokens) == 12 for instance in instances)


def test_train_size_sample_is_deterministic_and_uniform():
    path = str(GLUE / "MRPC/train.tsv")
    everything = [i["metadata"]["index"] for i in glue_reader("mrpc").read(path)]
    sample = [i["metadata"]["index"] for i in glue_reader("mrpc", train_size=4, seed=7).read(path)]
    again = [i["metadata"]["index"] for i in glue_reader("mrpc", train_size=4, seed=7).read(path)]
    other = [i["metadata"]["index"] for i in glue_reader("mrpc", train_size=4, seed=8).read(path)]
    assert sample == again
    assert len(sample) == 4 and set(sample) <= set(everything)
    # The same rows that random.Random(seed).sample over the whole file would pick.
    assert set(sample) == set(random.Random(7).sample(everything, 4))
    assert set(other) != set(sample)
    assert len(list(glue_reader("mrpc", train_size=100).read(path))) == 10


def test_a_held_out_part_is_carved_from_the_rows_read_and_never_trained_on():
    path = str(GLUE / "MRPC/train.tsv")

    def indexes(**options):
        return [i["metadata"]["index"] for i in glue_reader("mrpc", **options).read(path)]

    everything = indexes()
    # 10 rows, 0.3 held out: 3 rows, chosen with the seed; the other 7 in the file's order.
    rest, held_out = indexes(held_out_fraction=0.3), indexes(held_out_fraction=0.3, held_out=True)
    assert (len(rest), len(held_out)) == (7, 3)
    assert sorted(rest + held_out) == sorted(everything)
    assert rest == [index for index in everything if index not in held_out]
    assert indexes(held_out_fraction=0.3, held_out=True) == held_out  # deterministic
    assert indexes(held_out_fraction=0.3, held_out=True, seed=8) != held_out
    # Carved from the train_size sample: both parts of the same 6 rows (0.3 x 6 = 1.8: 2).
    sample = indexes(train_size=6, seed=7)
    rest = indexes(train_size=6, seed=7, held_out_fraction=0.3)
    held_out = indexes(train_size=6, seed=7, held_out_fraction=0.3, held_out=True)
    assert (len(rest), len(held_out)) == (4, 2)
    assert sorted(rest + held_out) == sorted(sample)
    reader = glue_reader("mrpc", train_size=6, held_out_fraction=0.3, held_out=True)
    assert reader.count_instances(path, 2) == [1, 1]
    assert glue_reader("mrpc", held_out_fraction=0.3).count_instances(path, 2) == [4, 3]
    # At least one row each way.
    assert len(indexes(held_out_fraction=0.01, held_out=True)) == 1
    assert len(indexes(held_out_fraction=0.99)) == 1
    with pytest.raises(ConfigurationError, match="held_out_fraction must be at least 0"):
        glue_reader("mrpc", held_out_fraction=1.0)
    with pytest.raises(ConfigurationError, match="without a held_out_fraction"):
        glue_reader("mrpc", held_out=True)


def test_test_file_indexes_are_kept():
    instances = list(glue_reader("qqp").read(str(GLUE / "QQP/test.tsv")))
    assert [i["metadata"]["index"] for i in instances] == ["0", "1", "2"]


def test_sharding_reads_each_instance_exactly_once(monkeypatch):
    """Two distributed ranks x two loader workers: every row is read by exactly one of them."""
    path = str(GLUE / "MRPC/train.tsv")
    shards = read_shards(monkeypatch, lambda: glue_reader("mrpc"), path)
    assert [len(shard) for shard in shards] == [3, 2, 3, 2]
    seen = [i["metadata"]["index"] for shard in shards for i in shard]
    expected = [i["metadata"]["index"] for i in glue_reader("mrpc").read(path)]
    assert sorted(seen) == sorted(expected)
    assert len(seen) == len(set(seen)) == 10
    # The count, made without tokenizing, is what each rank reads (over its two workers).
    assert glue_reader("mrpc").count_instances(path, 2) == [5, 5]
    assert glue_reader("mrpc").count_instances(path, 3) == [4, 3, 3]
    assert glue_reader("mrpc", train_size=7).count_instances(path, 2) == [4, 3]


def test_indexers_are_attached_outside_text_to_instance():
    reader = glue_reader("rte")
    instance = reader.text_to_instance("A man is here.", "Someone is here.", label="entailment")
    assert instance["tokens"]._token_indexers is None
    reader.apply_token_indexers(instance)
    assert set(instance["tokens"].token_indexers) == {"tokens"}


def test_configuration_errors():
    with pytest.raises(ConfigurationError, match="Unknown GLUE task 'sts'"):
        glue_reader("sts")
    with pytest.raises(ConfigurationError, match="add_special_tokens: false"):
        DatasetReader.from_params(
            Params(
                {
                    "type": "tft_glue",
                    "task": "rte",
                    "tokenizer": {
                        "type": "pretrained_transformer",
                        "model_name": os.environ["TFT_MODEL"],
                    },
                }
            )
        )
    with pytest.raises(ValueError, match="takes two sentences"):
        glue_reader("rte").text_to_instance("Only one.")


def test_multi_process_loader_yields_each_row_once():
    """A real `MultiProcessDataLoader` with two workers reads what one process reads."""
    path = str(GLUE / "MRPC/train.tsv")
    expected = sorted(i["metadata"]["index"] for i in glue_reader("mrpc").read(path))
    loader = MultiProcessDataLoader(glue_reader("mrpc"), path, batch_size=3, num_workers=2)
    seen = [i["metadata"]["index"] for i in loader.iter_instances()]
    assert sorted(seen) == expected and len(seen) == len(set(seen)) == 10


def hub_dataset(task, path):
    """The split as a Hugging Face dataset in the layout of `nyu-mll/glue` (integer labels)."""
    import datasets

    spec = GLUE_TASKS[task]
    rows = list(glue_rows(str(path), spec, InputProblems(str(path))))
    columns = {spec.hub_sentence1: [row.sentence1 for row in rows]}
    if spec.is_pair:
        columns[spec.hub_sentence2] = [row.sentence2 for row in rows]
    labelled = rows[0].label is not None
    columns["label"] = [
        (row.label if spec.is_regression else spec.labels.index(row.label)) if labelled else -1
        for row in rows
    ]
    columns["idx"] = list(range(len(rows)))
    return datasets.Dataset.from_dict(columns)


def summaries(instances):
    return [
        (
            texts(i),
            i["label"].label
            if "label" in i.fields and isinstance(i["label"], LabelField)
            else (i["label"].tensor.item() if "label" in i.fields else None),
        )
        for i in instances
    ]


@pytest.mark.parametrize("task, file", [(task, file) for task, file, *_ in CASES])
def test_a_hugging_face_dataset_gives_the_instances_of_the_tsv_file(task, file, tmp_path):
    tsv = GLUE / file
    dataset = hub_dataset(task, tsv)
    dataset.save_to_disk(str(tmp_path / "saved"))
    dataset.to_parquet(str(tmp_path / "split.parquet"))
    expected = summaries(glue_reader(task).read(str(tsv)))
    for path in (tmp_path / "saved", tmp_path / "split.parquet"):
        assert summaries(glue_reader(task).read(str(path))) == expected, path
    # The seeded subsample picks the same examples from either source.
    if len(expected) > 2:
        assert summaries(glue_reader(task, train_size=2).read(str(tsv))) == summaries(
            glue_reader(task, train_size=2).read(str(tmp_path / "saved"))
        )


def test_a_hub_name_loads_a_split_with_load_dataset(tmp_path, monkeypatch):
    """`hf:NAME:CONFIG:SPLIT` goes through `datasets.load_dataset` (here a local repository
    laid out as nyu-mll/glue is, one folder of parquet files per config)."""
    repository = tmp_path / "glue"
    for split, file in (("train", "MRPC/train.tsv"), ("validation", "MRPC/dev.tsv")):
        (repository / "mrpc").mkdir(parents=True, exist_ok=True)
        hub_dataset("mrpc", GLUE / file).to_parquet(
            str(repository / f"mrpc/{split}-00000-of-00001.parquet")
        )
    (repository / "README.md").write_text(
        "---\nconfigs:\n- config_name: mrpc\n  data_files:\n"
        "  - split: train\n    path: mrpc/train-*\n"
        "  - split: validation\n    path: mrpc/validation-*\n---\n"
    )
    instances = list(glue_reader("mrpc").read(f"hf:{repository}:mrpc:validation"))
    assert summaries(instances) == summaries(glue_reader("mrpc").read(str(GLUE / "MRPC/dev.tsv")))
    # GLUE_DIR=hf:NAME points the GLUE configs at the dataset's config and splits.
    monkeypatch.setenv("GLUE_DIR", f"hf:{repository}")
    for task, dev in (("mrpc", "validation"), ("mnli", "validation_matched")):
        params = Params.from_file(str(CONFIGS_ROOT / f"glue/{task}.jsonnet"))
        assert params["train_data_path"] == f"hf:{repository}:{task}:train"
        assert params["validation_data_path"] == f"hf:{repository}:{task}:{dev}"
    with pytest.raises(ConfigurationError, match="hf:NAME"):
        list(glue_reader("mrpc").read("hf:nyu-mll/glue"))


def test_dataset_problems_name_the_dataset_and_row(tmp_path):
    import datasets

    bad = datasets.Dataset.from_dict(
        {"sentence1": ["a man", ""], "sentence2": ["b", "c"], "label": [1, 0], "idx": [0, 1]}
    )
    bad.save_to_disk(str(tmp_path / "bad"))
    with pytest.raises(MalformedInputError, match=r"bad:2: empty sentence"):
        list(glue_reader("rte").read(str(tmp_path / "bad")))
    wrong = datasets.Dataset.from_dict({"premise": ["a"], "label": [0]})
    wrong.save_to_disk(str(tmp_path / "wrong"))
    with pytest.raises(ConfigurationError, match="no 'sentence1' column"):
        list(glue_reader("rte").read(str(tmp_path / "wrong")))
    classes = datasets.Dataset.from_dict({"sentence1": ["a"], "sentence2": ["b"], "label": [2]})
    classes.save_to_disk(str(tmp_path / "classes"))
    with pytest.raises(MalformedInputError, match=r"classes:1: unknown label: class 2"):
        list(glue_reader("rte").read(str(tmp_path / "classes")))
    both = datasets.DatasetDict({"train": bad, "test": bad})
    both.save_to_disk(str(tmp_path / "both"))
    with pytest.raises(ConfigurationError, match="holds the splits"):
        list(glue_reader("rte").read(str(tmp_path / "both")))


@pytest.mark.parametrize("score", ["7.5", "-1", "nan", "inf"])
def test_sts_b_scores_outside_zero_to_five_are_bad_rows(score, tmp_path):
    lines = (GLUE / "STS-B/dev.tsv").read_text().splitlines()
    fields = lines[2].split("\t")
    lines[2] = "\t".join(fields[:-1] + [score])
    (tmp_path / "dev.tsv").write_text("\n".join(lines) + "\n")
    with pytest.raises(MalformedInputError, match=r"dev.tsv:3: unknown label: score"):
        list(glue_reader("stsb").read(str(tmp_path / "dev.tsv")))
    assert len(list(glue_reader("stsb", lenient=True).read(str(tmp_path / "dev.tsv")))) == 5


@pytest.mark.parametrize(
    "content, lenient, message",
    [
        ("", False, "no rows to read: the file is empty or holds only its header"),
        ("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n", False, "holds only its header"),
        (
            "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n7\t1\t2\ta\tb\n2\t3\t4\tc\td\n",
            True,
            "no valid rows: all 2 were malformed and skipped by lenient reading",
        ),
    ],
)
def test_a_file_without_rows_is_an_error_naming_it(tmp_path, content, lenient, message):
    path = tmp_path / "dev.tsv"
    path.write_text(content)
    reader = glue_reader("mrpc", lenient=lenient)
    with pytest.raises(MalformedInputError, match=rf"dev.tsv: .*{message}"):
        list(reader.read(str(path)))
    with pytest.raises(MalformedInputError, match=rf"dev.tsv: .*{message}"):
        reader.count_instances(str(path))
    with pytest.raises(MalformedInputError, match=rf"dev.tsv: .*{message}"):
        list(glue_reader("mrpc", lenient=lenient, train_size=5).read(str(path)))


def test_separate_pair_encoding_gives_each_sentence_its_own_field():
    """`pair_encoding: "separate"` (Siamese models): each sentence alone, in its own field."""
    reader = glue_reader("mrpc", pair_encoding="separate")
    instances = list(reader.read(str(GLUE / "MRPC/train.tsv")))
    first = instances[0]
    assert set(first.fields) == {"tokens1", "tokens2", "label", "metadata"}
    assert [token.text for token in first["tokens1"].tokens] == f"[CLS] {FLUTE} [SEP]".split()
    assert [token.text for token in first["tokens2"].tokens] == (
        "[CLS] a man plays the f ##lu ##te . [SEP]".split()
    )
    # The single-sentence layout: one segment each.
    assert {token.type_id for token in first["tokens2"].tokens} == {0}
    assert first["label"].label == "1"
    assert first["metadata"]["sentence2"] == "A man plays the flute."
    assert first["tokens1"].token_indexers.keys() == {"tokens"}
    assert first["tokens2"].token_indexers.keys() == {"tokens"}
    # Unlabelled test rows and STS-B's scores come as in the cross encoding.
    assert "label" not in next(iter(reader.read(str(GLUE / "MRPC/test.tsv"))))
    stsb = glue_reader("stsb", pair_encoding="separate").read(str(GLUE / "STS-B/train.tsv"))
    assert next(iter(stsb))["label"].tensor.item() == pytest.approx(4.8)


def test_separate_pair_encoding_truncates_each_sentence_from_its_end(caplog):
    # 10 wordpieces per sentence, [CLS] and [SEP] included: the first sentence (10 pieces)
    # loses its last two; the second (8) is kept whole, not shortened to match (no longest
    # first across the pair).
    reader = glue_reader("mrpc", pair_encoding="separate", max_length=10)
    first = list(reader.read(str(GLUE / "MRPC/train.tsv")))[0]
    assert [t.text for t in first["tokens1"].tokens] == (
        "[CLS] a man is play ##ing a f ##lu [SEP]".split()
    )
    assert [t.text for t in first["tokens2"].tokens] == (
        "[CLS] a man plays the f ##lu ##te . [SEP]".split()
    )
    assert "examples" in caplog.text and "wordpieces (each sentence)" in caplog.text


def test_pair_encoding_errors():
    with pytest.raises(ConfigurationError, match="pair_encoding must be one of cross, separate"):
        glue_reader("mrpc", pair_encoding="siamese")
    with pytest.raises(ConfigurationError, match="needs a sentence-pair task, not cola"):
        glue_reader("cola", pair_encoding="separate")
