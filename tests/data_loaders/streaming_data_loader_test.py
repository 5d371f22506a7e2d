import multiprocessing
import os
import random
import signal
import time

import pytest
import torch
from allennlp.common import Params
from allennlp.data import DataLoader, DatasetReader, Vocabulary

from tests import CONFIGS_ROOT
from tests.synthetic import write_corpus, write_mrpc
from tft_allennlp.data_loaders.streaming_data_loader import empty_batch


def glue_reader():
    return DatasetReader.from_params(
        Params.from_file(str(CONFIGS_ROOT / "glue/mrpc.jsonnet"))["dataset_reader"]
    )


def build_loader(reader, path, vocab=None, **kwargs):
    loader = DataLoader.from_params(
        Params({"type": "tft_streaming", **kwargs}), reader=reader, data_path=str(path)
    )
    loader.index_with(vocab or Vocabulary(tokens_to_add={"labels": ["0", "1"]}))
    return loader


def padding(batches):
    """Wordpiece positions that are padding."""
    return sum(int((~b["tokens"]["tokens"]["mask"]).sum()) for b in batches)


def lines_of(batch):
    return [metadata["line_number"] for metadata in batch["metadata"]]


@pytest.mark.parametrize("num_workers", [0, 2])
def test_windows_bucket_by_length_and_see_every_instance_once(tmp_path, num_workers):
    write_mrpc(tmp_path / "train.tsv", 203)
    loader = build_loader(
        glue_reader(),
        tmp_path / "train.tsv",
        batch_size=10,
        shuffle=True,
        max_instances_in_memory=50,
        num_workers=num_workers,
    )
    random.seed(1)
    batches = list(loader)
    # 203 instances: 20 full batches and the remainder of 3, which comes last; the partial
    # batch of each window of 50 was carried into the next window instead.
    assert [len(lines_of(b)) for b in batches] == [10] * 20 + [3]
    assert len(loader) == len(batches)
    assert sorted(line for b in batches for line in lines_of(b)) == list(range(2, 205))
    # Bucketing: a batch pads to the longest of its quarter of a group of 4 batches, so that it
    # holds well under the padding of batches in reading order (pairs of 6 to 24 words here).
    unbucketed = build_loader(
        glue_reader(),
        tmp_path / "train.tsv",
        batch_size=10,
        bucket_batches=0,
        max_instances_in_memory=50,
    )
    assert padding(batches) < 0.6 * padding(unbucketed)
    # Sorting whole windows would pad less still, but make batches slivers of the length range.
    windows = build_loader(
        glue_reader(),
        tmp_path / "train.tsv",
        batch_size=10,
        bucket_batches=5,
        max_instances_in_memory=50,
        shuffle=True,
    )
    assert padding(list(windows)) < padding(batches)
    # Shuffling: the batch order changes with the seed.
    random.seed(2)
    assert [lines_of(b) for b in loader] != [lines_of(b) for b in batches]


def test_without_shuffling_the_order_is_fixed_and_the_random_generator_untouched(tmp_path):
    write_mrpc(tmp_path / "dev.tsv", 40)
    reader = glue_reader()
    plain = build_loader(reader, tmp_path / "dev.tsv", batch_size=8, bucket_batches=0)
    assert [line for b in plain for line in lines_of(b)] == list(range(2, 42))
    bucketed = build_loader(
        reader, tmp_path / "dev.tsv", batch_size=8, bucket_batches=2, max_instances_in_memory=16
    )
    state = random.getstate()
    first = [lines_of(b) for b in bucketed]
    # Validation must not move the generator that shuffles training (nor `--recover` replays).
    assert random.getstate() == state
    assert [lines_of(b) for b in bucketed] == first
    for batch in bucketed:
        lengths = batch["tokens"]["tokens"]["mask"].sum(-1)
        assert lengths.tolist() == sorted(lengths.tolist())


def test_length_comes_from_the_readers_count_per_distributed_worker(tmp_path):
    write_corpus(tmp_path / "corpus.jsonl", 45)
    params = Params.from_file(
        str(CONFIGS_ROOT / "injection/tft.jsonnet"), '{"dataset_reader.part": "all"}'
    )
    reader = DatasetReader.from_params(params["dataset_reader"])
    vocab = Vocabulary.from_params(params["vocabulary"], instances=[])
    # 45 lines, a paraphrase and a random instance each; a rank reads every second line.
    assert reader.count_instances(str(tmp_path / "corpus.jsonl")) == [90]
    assert reader.count_instances(str(tmp_path / "corpus.jsonl"), 2) == [46, 44]
    loader = build_loader(reader, tmp_path / "corpus.jsonl", vocab, batch_size=20)
    assert len(loader) == 5 == len(list(loader))
    assert (
        len(
            build_loader(
                reader, tmp_path / "corpus.jsonl", vocab, batch_size=20, batches_per_epoch=3
            )
        )
        == 3
    )


def test_a_reader_that_cannot_count_makes_the_length_unknown(tmp_path):
    write_mrpc(tmp_path / "train.tsv", 5)
    reader = DatasetReader.from_params(
        Params.from_file(
            str(CONFIGS_ROOT / "glue/mrpc.jsonnet"), '{"dataset_reader.max_instances": 3}'
        )["dataset_reader"]
    )
    with pytest.raises(TypeError):
        len(build_loader(reader, tmp_path / "train.tsv", batch_size=2))


def test_empty_batch_keeps_every_key_with_no_examples():
    batch = {
        "tokens": {"tokens": {"token_ids": torch.ones(3, 5, dtype=torch.long)}},
        "label": torch.tensor([1, 0, 1]),
        "metadata": [{"a": 1}] * 3,
    }
    empty = empty_batch(batch)
    assert empty["tokens"]["tokens"]["token_ids"].shape == (0, 5)
    assert empty["label"].shape == (0,) and empty["metadata"] == []


def two_reader_loader(path):
    """Batches of 10 from two reader processes that hold at most 20 instances each in hand."""
    return build_loader(
        glue_reader(), path, batch_size=10, max_instances_in_memory=20, num_workers=2
    )


def test_reader_processes_outlive_a_stop_signal_to_the_whole_job(tmp_path):
    # A scheduler's SIGTERM reaches the reader processes too; they go on serving the batches
    # that the trainer trains before it stops (tft_allennlp.training.stop_signals).
    write_mrpc(tmp_path / "train.tsv", 1000)
    loader = two_reader_loader(tmp_path / "train.tsv")
    start_readers = loader._start_instance_workers

    def start_then_signal(*args):
        # The signal comes as the readers start, before they ran a line of their own.
        readers, pipes = start_readers(*args)
        for reader in readers:
            os.kill(reader.pid, signal.SIGTERM)
        return readers, pipes

    setattr(loader, "_start_instance_workers", start_then_signal)
    # A reader killed while the loader waits on it would hang the test: fail it instead.
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the loader waits on a dead reader"))
    signal.alarm(60)
    batches = iter(loader)
    lines = lines_of(next(batches))
    readers = multiprocessing.active_children()
    assert len(readers) == 2
    for reader in readers:
        os.kill(reader.pid, signal.SIGTERM)
    try:
        lines += [line for batch in batches for line in lines_of(batch)]
    finally:
        signal.alarm(0)
    assert sorted(lines) == list(range(2, 1002))
    assert all(reader.exitcode == 0 for reader in readers)


def gone(pid):
    """Whether process `pid` has ended (a zombie no one has reaped yet counts)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_reader_processes_end_with_a_killed_trainer(tmp_path):
    # The out-of-memory killer takes the trainer: its readers, blocked handing over instances
    # that no one will take, would wait forever.
    write_mrpc(tmp_path / "train.tsv", 1000)
    read, write = os.pipe()
    trainer = os.fork()
    if trainer == 0:  # the trainer never returns into the test
        try:
            # GNU OpenMP's threads do not survive a fork: with one, torch starts none.
            torch.set_num_threads(1)
            loader = two_reader_loader(tmp_path / "train.tsv")
            batches = iter(loader)
            next(batches)
            pids = " ".join(str(reader.pid) for reader in multiprocessing.active_children())
            os.write(write, pids.encode() + b"\n")
            signal.pause()
        finally:
            os._exit(1)
    os.close(write)
    with os.fdopen(read) as pipe:
        readers = [int(pid) for pid in pipe.readline().split()]
    assert len(readers) == 2 and not any(gone(pid) for pid in readers)
    os.kill(trainer, signal.SIGKILL)
    os.waitpid(trainer, 0)
    deadline = time.monotonic() + 30
    try:
        while not all(gone(pid) for pid in readers):
            assert time.monotonic() < deadline, "the readers outlived their trainer"
            time.sleep(0.1)
    finally:
        for pid in readers:
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_skipped_passes_read_nothing_and_the_pass_after_them_is_the_uninterrupted_one(tmp_path):
    # `--recover` skips the epochs before its checkpoint this way (tft_rng_checkpoint).
    write_mrpc(tmp_path / "train.tsv", 203)

    def shuffled_loader():
        return build_loader(
            glue_reader(),
            tmp_path / "train.tsv",
            batch_size=10,
            shuffle=True,
            max_instances_in_memory=50,
        )

    random.seed(1)
    uninterrupted = shuffled_loader()
    first = [lines_of(batch) for batch in uninterrupted]
    state = uninterrupted.pass_state(upcoming=True)
    # The sorting keys are guessed in the first pass; the next pass's state holds them.
    assert state["sorting_keys"] == ["tokens"]
    batches = iter(uninterrupted)
    second = [lines_of(next(batches))]
    assert uninterrupted.pass_state(upcoming=False) == state
    second += [lines_of(batch) for batch in batches]
    assert second != first and sorted(sum(second, [])) == sorted(sum(first, []))

    random.seed(2)
    resumed = shuffled_loader()
    resumed.skip_passes(1, state)
    read = resumed.reader.read
    setattr(resumed.reader, "read", lambda *_: pytest.fail("a skipped pass read the data"))
    assert list(resumed) == [{}] * 21
    setattr(resumed.reader, "read", read)
    assert [lines_of(batch) for batch in resumed] == second
    assert resumed.pass_state(upcoming=True) == uninterrupted.pass_state(upcoming=True)
