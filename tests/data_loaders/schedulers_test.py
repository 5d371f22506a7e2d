from typing import Dict, Iterator, List

import pytest
from allennlp.data import Instance
from allennlp.data.data_loaders.multitask_scheduler import MultiTaskScheduler
from allennlp.data.fields import MetadataField

from tft_allennlp.data_loaders.multitask_data_loader import _CountedInstances
from tft_allennlp.data_loaders.schedulers import SequentialScheduler, ShuffledScheduler

# Three tasks of uneven sizes: a has 5 instances, b 2, c 3.
SIZES = {"a": 5, "b": 2, "c": 3}


def _instances(task: str, count: int) -> List[Instance]:
    return [Instance({"id": MetadataField(f"{task}{i}")}) for i in range(count)]


def _epoch() -> Dict[str, List[Instance]]:
    return {task: _instances(task, count) for task, count in SIZES.items()}


def _ids(batches) -> List[List[str]]:
    return [[instance["id"].metadata for instance in batch] for batch in batches]


def test_sequential_takes_every_batch_of_a_task_before_the_next():
    batches = _ids(SequentialScheduler(batch_size=2).batch_instances(_epoch()))
    assert batches == [["a0", "a1"], ["a2", "a3"], ["a4"], ["b0", "b1"], ["c0", "c1"], ["c2"]]
    assert SequentialScheduler(batch_size=2).count_batches(SIZES) == 6


def test_sequential_batch_size_per_task_and_drop_last():
    scheduler = SequentialScheduler(batch_size={"a": 3, "b": 2, "c": 2}, drop_last=True)
    batches = _ids(scheduler.batch_instances(_epoch()))
    assert batches == [["a0", "a1", "a2"], ["b0", "b1"], ["c0", "c1"]]
    assert scheduler.count_batches(SIZES) == 3


def test_allennlps_homogeneous_round_robin_takes_one_batch_of_each_task_in_turn():
    scheduler = MultiTaskScheduler.by_name("homogeneous_roundrobin")(batch_size=2)
    batches = _ids(scheduler.batch_instances(_epoch()))
    assert batches == [["a0", "a1"], ["b0", "b1"], ["c0", "c1"], ["a2", "a3"], ["c2"], ["a4"]]
    assert scheduler.count_batches(SIZES) == 6


class _Stream:
    """A task's instances made one at a time by a generator, with a length, counting reads."""

    def __init__(self, task: str, count: int) -> None:
        self.task = task
        self.count = count
        self.made = 0

    def _generate(self) -> Iterator[Instance]:
        for i in range(self.count):
            self.made += 1
            yield Instance({"id": MetadataField(f"{self.task}{i}")})

    def counted(self) -> _CountedInstances:
        return _CountedInstances(self._generate(), self.count)


def _shuffled_epoch(seed: int):
    streams = {task: _Stream(task, count) for task, count in SIZES.items()}
    scheduler = ShuffledScheduler(batch_size=2, seed=seed)
    batches = scheduler.batch_instances({task: s.counted() for task, s in streams.items()})
    return streams, batches


def test_shuffled_gives_every_batch_once_one_task_each_reproducibly():
    _, batches = _shuffled_epoch(seed=1)
    order = _ids(batches)
    # One task per batch, each task's batches in reading order, each instance once.
    assert all(len({instance_id[0] for instance_id in batch}) == 1 for batch in order)
    for task, count in SIZES.items():
        assert [i for batch in order for i in batch if i[0] == task] == [
            f"{task}{i}" for i in range(count)
        ]
    assert len(order) == ShuffledScheduler(batch_size=2).count_batches(SIZES) == 6
    assert order == _ids(_shuffled_epoch(seed=1)[1])
    # The order is random: some seed gives another one, and they are not sequential.
    orders = {tuple(map(tuple, _ids(_shuffled_epoch(seed=seed)[1]))) for seed in range(20)}
    assert len(orders) > 5


def test_shuffled_does_not_materialise_the_epoch():
    streams, batches = _shuffled_epoch(seed=3)
    assert sum(s.made for s in streams.values()) == 0
    first = next(iter(batches))
    # Only the first batch has been read.
    assert sum(s.made for s in streams.values()) == len(first) == 2
    assert streams[first[0]["id"].metadata[0]].made == 2


def test_shuffled_draws_in_proportion_to_the_remaining_batches():
    # Task a has 9 of the 10 batches: it comes first in about 90% of the epochs.
    sizes = {"a": 9, "b": 1}
    scheduler = ShuffledScheduler(batch_size=1, seed=0)
    firsts = [
        _ids(
            scheduler.batch_instances(
                {t: _CountedInstances(_instances(t, n), n) for t, n in sizes.items()}
            )
        )[0][0][0]
        for _ in range(500)
    ]
    assert 0.85 < firsts.count("a") / 500 < 0.95


def test_shuffled_needs_the_task_lengths_and_checks_them():
    scheduler = ShuffledScheduler(batch_size=2)
    with pytest.raises(TypeError, match="tft_multitask"):
        scheduler.batch_instances({"a": iter(_instances("a", 2))})
    with pytest.raises(ValueError, match="fewer instances"):
        list(scheduler.batch_instances({"a": _CountedInstances(_instances("a", 2), 4)}))
    with pytest.raises(ValueError, match="more instances"):
        list(scheduler.batch_instances({"a": _CountedInstances(_instances("a", 4), 2)}))
