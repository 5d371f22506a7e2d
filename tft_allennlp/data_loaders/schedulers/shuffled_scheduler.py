import random
from typing import Dict, Iterable, Iterator, List, Sized, Union

from allennlp.data import Instance
from allennlp.data.data_loaders.multitask_scheduler import MultiTaskScheduler

from tft_allennlp.data_loaders.schedulers.single_task_scheduler import SingleTaskScheduler


@MultiTaskScheduler.register("tft_shuffled")
class ShuffledScheduler(SingleTaskScheduler):
    """
    All single-task batches of the epoch in a random order, without materialising the epoch:
    the next batch comes from a task drawn with probability proportional to its number of
    remaining batches, which makes every interleaving of the tasks' batches equally likely
    (each task's batches keep their reading order, which the data loader shuffles). Only one
    batch per task is held at a time.

    The number of batches of each task must be known in advance: each task's instances must
    have a `len()`, as the `tft_multitask` data loader gives them.

    Registered as a `MultiTaskScheduler` with name "tft_shuffled".

    # Parameters

    batch_size : `Union[int, Dict[str, int]]`
        Instances per batch: one size for every task, or one per task name.
    drop_last : `bool`, optional (default = `False`)
        Drops each task's last batch when it is smaller than `batch_size`.
    seed : `int`, optional (default = `13370`)
        Seeds the draws: the same seed gives the same sequence of epochs.
    """

    def __init__(
        self, batch_size: Union[int, Dict[str, int]], drop_last: bool = False, seed: int = 13370
    ) -> None:
        super().__init__(batch_size, drop_last)
        self._random = random.Random(seed)

    def batch_instances(
        self, epoch_instances: Dict[str, Iterable[Instance]]
    ) -> Iterator[List[Instance]]:
        for task, instances in epoch_instances.items():
            if not isinstance(instances, Sized):
                raise TypeError(
                    f"tft_shuffled needs the number of instances of task {task!r} before "
                    "reading them; use the tft_multitask data loader."
                )
        remaining = {
            task: self.num_batches(task, len(instances))  # type: ignore[arg-type]
            for task, instances in epoch_instances.items()
        }
        batches = {
            task: iter(self._batches(task, instances))
            for task, instances in epoch_instances.items()
        }
        return self._draw(remaining, batches)

    def _draw(
        self, remaining: Dict[str, int], batches: Dict[str, Iterator[List[Instance]]]
    ) -> Iterator[List[Instance]]:
        while True:
            tasks = [task for task, count in remaining.items() if count > 0]
            if not tasks:
                break
            task = self._random.choices(tasks, weights=[remaining[task] for task in tasks])[0]
            remaining[task] -= 1
            batch = next(batches[task], None)
            if batch is None:
                raise ValueError(f"Task {task!r} has fewer instances than its length says.")
            yield batch
        for task, rest in batches.items():
            if next(rest, None) is not None:
                raise ValueError(f"Task {task!r} has more instances than its length says.")
