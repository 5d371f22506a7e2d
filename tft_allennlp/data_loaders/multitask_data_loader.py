import itertools
import math
from typing import Dict, Iterable, Iterator

import torch.distributed as dist
from allennlp.common.util import is_distributed
from allennlp.data import Instance
from allennlp.data.data_loaders import DataLoader
from allennlp.data.data_loaders.multitask_data_loader import (
    MultiTaskDataLoader,
    maybe_shuffle_instances,
)
from allennlp.data.data_loaders.multitask_scheduler import MultiTaskScheduler
from allennlp.data.dataset_readers.multitask import MultiTaskDatasetReader


class _CountedInstances:
    """A task's instances for one epoch, read lazily, with their number known in advance."""

    def __init__(self, instances: Iterable[Instance], count: int) -> None:
        self._instances = instances
        self._count = count

    def __iter__(self) -> Iterator[Instance]:
        return iter(self._instances)

    def __len__(self) -> int:
        return self._count


@DataLoader.register("tft_multitask")
class CountingMultiTaskDataLoader(MultiTaskDataLoader):
    """
    AllenNLP's `multitask` data loader with an exact length while streaming. In AllenNLP 2.10.1:

    - with `max_instances_in_memory` (the only way to stream: without it each task's loader
      keeps all its instances in memory), `len()` raises `TypeError`, so the learning-rate
      schedule gets no number of steps;
    - with `instances_per_epoch`, `len()` counts `instances_per_epoch` instances for *every*
      task, although an epoch takes only `floor(proportion * instances_per_epoch)` of each.

    Here each task's instance count comes from its reader's `count_instances` (the plugin's
    readers count rows without tokenizing; this distributed worker's share under DDP) or,
    failing that, from AllenNLP's loader, and the epoch's counts are those the sampler allots.
    The scheduler gets each task's instances with a `len()`, so that `tft_shuffled` can draw
    batches without materialising the epoch.

    Shuffling (`shuffle`, default `True`) is AllenNLP's: a pool of 1024 instances per task.
    Set `shuffle: false` for validation, with the `tft_sequential` scheduler and no
    `instances_per_epoch`, to read every instance once in a fixed order.

    Registered as a `DataLoader` with name "tft_multitask".

    # Parameters

    reader : `MultiTaskDatasetReader`
    data_path : `Dict[str, str]`
        Supplied by `allennlp train` from `*_data_path`; one path per task.
    scheduler : `MultiTaskScheduler`
        Orders the batches: `tft_sequential`, `tft_shuffled`, `homogeneous_roundrobin`.
    **kwargs
        The other parameters of AllenNLP's `multitask` loader (`sampler`,
        `instances_per_epoch`, `max_instances_in_memory`, `num_workers`, `shuffle`, ...).
    """

    def __init__(
        self,
        reader: MultiTaskDatasetReader,
        data_path: Dict[str, str],
        scheduler: MultiTaskScheduler,
        **kwargs,
    ) -> None:
        super().__init__(reader, data_path, scheduler, **kwargs)
        self._task_sizes: Dict[str, int] = {}

    def __len__(self) -> int:
        return self.scheduler.count_batches(self._epoch_counts())

    def _task_size(self, task: str) -> int:
        """How many instances of `task` this worker reads in a full pass."""
        if task not in self._task_sizes:
            inner = self.readers[task].inner
            count = getattr(inner, "count_instances", None)
            if count is None or inner.max_instances is not None:
                # AllenNLP's loader has batch size 1: its length is its number of instances.
                self._task_sizes[task] = len(self._loaders[task])
            else:
                world_size = dist.get_world_size() if is_distributed() else 1
                rank = dist.get_rank() if is_distributed() else 0
                self._task_sizes[task] = count(self.data_paths[task], world_size)[rank]
        return self._task_sizes[task]

    def _epoch_counts(self) -> Dict[str, int]:
        """How many instances of each task one epoch takes."""
        if self._instances_per_epoch is None:
            return {task: self._task_size(task) for task in self._loaders}
        assert self.sampler is not None  # checked by AllenNLP's constructor
        proportions = self.sampler.get_task_proportions(self._loaders)
        total = sum(proportions.values())
        return {
            task: math.floor(proportion * self._instances_per_epoch / total)
            for task, proportion in proportions.items()
        }

    def _get_instances_for_epoch(self) -> Dict[str, Iterable[Instance]]:
        counts = self._epoch_counts()
        if self._instances_per_epoch is None:
            return {
                task: _CountedInstances(
                    maybe_shuffle_instances(loader, self._shuffle), counts[task]
                )
                for task, loader in self._loaders.items()
            }
        # The tasks' endless iterators continue where the last epoch stopped.
        return {
            task: _CountedInstances(itertools.islice(self._iterators[task], count), count)
            for task, count in counts.items()
        }
