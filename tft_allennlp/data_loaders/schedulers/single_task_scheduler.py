import math
from collections import defaultdict
from typing import Dict, Iterable, List, Mapping, Union

from allennlp.data import Instance
from allennlp.data.data_loaders.multitask_scheduler import MultiTaskScheduler, _chunked_iterator


class SingleTaskScheduler(MultiTaskScheduler):
    """
    The shared part of the plugin's schedulers: every batch holds instances of one task only
    (GLUE tasks have different label fields, which AllenNLP cannot put into one batch), cut in
    reading order with the task's batch size; subclasses decide only the order of the batches.
    Not registered itself.

    # Parameters

    batch_size : `Union[int, Dict[str, int]]`
        Instances per batch: one size for every task, or one per task name.
    drop_last : `bool`, optional (default = `False`)
        Drops each task's last batch when it is smaller than `batch_size`.
    """

    def __init__(self, batch_size: Union[int, Dict[str, int]], drop_last: bool = False) -> None:
        self.batch_size: Mapping[str, int]
        if isinstance(batch_size, int):
            self.batch_size = defaultdict(lambda: batch_size)  # type: ignore[arg-type]
        else:
            self.batch_size = batch_size
        self.drop_last = drop_last

    def _batches(self, task: str, instances: Iterable[Instance]) -> Iterable[List[Instance]]:
        """The batches of one task, in reading order, made lazily."""
        return _chunked_iterator(instances, self.batch_size[task], self.drop_last)

    def num_batches(self, task: str, num_instances: int) -> int:
        """How many batches `num_instances` instances of `task` make."""
        if self.drop_last:
            return num_instances // self.batch_size[task]
        return math.ceil(num_instances / self.batch_size[task])

    def count_batches(self, dataset_counts: Dict[str, int]) -> int:
        return sum(self.num_batches(task, count) for task, count in dataset_counts.items())
