import itertools
from typing import Dict, Iterable, List

from allennlp.data import Instance
from allennlp.data.data_loaders.multitask_scheduler import MultiTaskScheduler

from tft_allennlp.data_loaders.schedulers.single_task_scheduler import SingleTaskScheduler


@MultiTaskScheduler.register("tft_sequential")
class SequentialScheduler(SingleTaskScheduler):
    """
    All batches of the first task, then all batches of the next, in the order in which the
    tasks are given (the config's order of `readers`). Every batch holds one task only. The
    order validation should use: every instance once, in a fixed order.

    Registered as a `MultiTaskScheduler` with name "tft_sequential".

    # Parameters

    batch_size : `Union[int, Dict[str, int]]`
        Instances per batch: one size for every task, or one per task name.
    drop_last : `bool`, optional (default = `False`)
        Drops each task's last batch when it is smaller than `batch_size`.
    """

    def batch_instances(
        self, epoch_instances: Dict[str, Iterable[Instance]]
    ) -> Iterable[List[Instance]]:
        return itertools.chain.from_iterable(
            self._batches(task, instances) for task, instances in epoch_instances.items()
        )
