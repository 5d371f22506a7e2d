import itertools
import logging
import math
import os
import random
import signal
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import torch
import torch.distributed as dist
from allennlp.common.util import is_distributed, lazy_groups_of
from allennlp.data import DatasetReader, Instance
from allennlp.data.data_loaders import DataLoader, MultiProcessDataLoader, TensorDict
from allennlp.data.data_loaders.data_collator import DataCollator, DefaultDataCollator
from allennlp.data.dataset_readers import DatasetReaderInput
from allennlp.data.fields import TextField
from allennlp.data.samplers.bucket_batch_sampler import add_noise_to_value
from allennlp.nn import util as nn_util

from tft_allennlp.common.child_processes import (
    end_with_parent,
    held_while_helpers_start,
    ignore_stop_signals,
)

logger = logging.getLogger(__name__)


@DataLoader.register("tft_streaming")
class StreamingDataLoader(MultiProcessDataLoader):
    """
    AllenNLP's `MultiProcessDataLoader` for corpora of any size and for distributed training
    that sees every instance exactly once:

    - **Streaming.** Instances are read lazily; at most `max_instances_in_memory` of them (a
      window) are held at a time, plus fewer than `batch_size` carried to the next window.
    - **Length bucketing.** Each window is shuffled, then sorted by length within groups of
      `bucket_batches` batches (with `padding_noise` when shuffling, as AllenNLP's `bucket`
      sampler does) and cut into batches of `batch_size`, which are shuffled again. A batch
      then pads to the longest of its share of the group's lengths rather than to the longest
      of a random sample. The GLUE configs sort whole windows without noise (`bucket_batches`
      = window / `batch_size`, `padding_noise: 0`); `benchmarks/RESULTS.md` has what that does
      to padding and to dev scores (STS-B, whose first epoch sorted batches slow, trains on
      random ones: `bucket_batches: 0`). The last, partial batch of a window is carried into the
      next one, so an epoch of `n` instances is exactly `ceil(n / batch_size)` batches, all
      full but the very last. `bucket_batches: 0` turns bucketing off.
    - **Every instance once under DDP.** AllenNLP's trainer ends a distributed epoch when the
      first worker runs out of batches, so the data of the others' last batches would never be
      trained on or validated. Without `batches_per_epoch`, this loader makes every worker take
      the same number of steps: a worker whose share is used up takes *empty* batches (every
      tensor with batch size 0) until the last worker is done. The plugin's models return a
      zero loss connected to every parameter for them (DDP needs every worker's backward),
      update no metric, and divide their losses by the mean number of examples per worker,
      so each step's gradient is the mean over the real examples of all workers. One small
      collective per batch decides this.

    Its length is exact, and known before reading, when the reader can count its instances
    (`count_instances`, as the plugin's readers do); otherwise, as for AllenNLP's lazy loader,
    `len()` raises `TypeError` unless `batches_per_epoch` is set.

    Batches are made in the main process from the instances that the `num_workers` reader
    processes produce, so that the number of batches does not depend on `num_workers`. The
    reader processes ignore SIGTERM and Ctrl-C, so that the trainer can finish its batch and
    save a checkpoint when the whole job is signalled (`tft_allennlp.training.stop_signals`).

    A pass takes over from the passes before it only Python's random generator (shuffling,
    padding noise) and the sorting keys guessed from the first window (`pass_state`). So
    `allennlp train --recover`, which replays the epochs before its checkpoint only for what they
    leave there, need not read them again: `skip_passes` makes them placeholders
    (`tft_rng_checkpoint` does this).

    Registered as a `DataLoader` with name "tft_streaming".

    # Parameters

    reader : `DatasetReader`
    data_path : `DatasetReaderInput`
        Supplied by `allennlp train` from `*_data_path`; no config entry.
    batch_size : `int`
        Instances per batch (per worker under distributed training).
    shuffle : `bool`, optional (default = `False`)
        Shuffles each window and the order of its batches, and with bucketing adds the padding
        noise. Set it for training; without it the reading order is kept (within sorted groups).
    bucket_batches : `int`, optional (default = `4`)
        How many batches' worth of instances are sorted by length together: more pads less,
        fewer keeps batches mixed in length. 0 turns bucketing off.
    sorting_keys : `List[str]`, optional (default = `None`)
        Fields whose lengths bucketing sorts by; if not given, the longest text field of the
        first instances.
    padding_noise : `float`, optional (default = `0.1`)
        Relative noise added to the lengths before sorting when `shuffle` is set.
    max_instances_in_memory : `int`, optional (default = `100 * batch_size`)
        The window: how many instances are read, sorted and shuffled together.
    batches_per_epoch : `int`, optional (default = `None`)
        If given, every epoch is exactly this many batches, the data restarting when it runs
        out (AllenNLP's meaning): validate every N batches of a large corpus.
    num_workers : `int`, optional (default = `0`)
    start_method : `str`, optional (default = `"fork"`)
    cuda_device : `Union[int, str, torch.device]`, optional
        Set by the trainer; no config entry.
    quiet : `bool`, optional (default = `True`)
        Hides the "loading instances" progress bar that AllenNLP shows beside the trainer's.
    collate_fn : `DataCollator`, optional (default = `DefaultDataCollator`)
    pin_memory : `bool`, optional (default = `False`)
        When the trainer's device is a GPU, each batch is copied into page-locked memory and from
        there to the GPU without waiting (`non_blocking`): the host goes on to the next batch
        while the copy and the step run, where a copy from ordinary memory waits for the GPU to
        finish the steps queued before it. No effect on the CPU.
    """

    # Always set here (AllenNLP's loader allows None for both).
    batch_size: int
    max_instances_in_memory: int

    def __init__(
        self,
        reader: DatasetReader,
        data_path: DatasetReaderInput,
        *,
        batch_size: int,
        shuffle: bool = False,
        bucket_batches: int = 4,
        sorting_keys: Optional[List[str]] = None,
        padding_noise: float = 0.1,
        max_instances_in_memory: Optional[int] = None,
        batches_per_epoch: Optional[int] = None,
        num_workers: int = 0,
        start_method: str = "fork",
        cuda_device: Optional[Union[int, str, torch.device]] = None,
        quiet: bool = True,
        collate_fn: DataCollator = DefaultDataCollator(),
        pin_memory: bool = False,
    ) -> None:
        self._pin_memory = pin_memory
        super().__init__(
            reader,
            data_path,
            batch_size=batch_size,
            shuffle=shuffle,
            batches_per_epoch=batches_per_epoch,
            num_workers=num_workers,
            max_instances_in_memory=max_instances_in_memory or 100 * batch_size,
            start_method=start_method,
            cuda_device=cuda_device,
            quiet=quiet,
            collate_fn=collate_fn,
        )
        self.bucket_batches = bucket_batches
        self.sorting_keys = sorting_keys
        self.padding_noise = padding_noise
        self._num_batches: Optional[int] = None
        self._pass_start: Optional[Dict[str, Any]] = None
        self._skipping: Optional[Tuple[int, Dict[str, Any]]] = None
        self._trainer_pid: Optional[int] = None

    def _start_instance_workers(self, *args: Any) -> Any:
        self._trainer_pid = os.getpid()
        with held_while_helpers_start():
            return super()._start_instance_workers(*args)

    def _instance_worker(self, *args: Any) -> None:
        ignore_stop_signals()
        # A reader whose trainer was killed would wait forever to hand over its next instance.
        # (A fork server's children are the server's, which outlives the trainer.)
        if self.start_method != "forkserver":
            end_with_parent(signal.SIGKILL, parent=self._trainer_pid)
        super()._instance_worker(*args)

    def __len__(self) -> int:
        if self.batches_per_epoch is not None:
            return self.batches_per_epoch
        if self._num_batches is None:
            count = getattr(self.reader, "count_instances", None)
            if count is None:
                # Like AllenNLP's lazy loader: unknown without reading everything.
                raise TypeError(f"{type(self.reader).__name__} cannot count its instances.")
            world_size = dist.get_world_size() if is_distributed() else 1
            per_worker = count(self.data_path, world_size)
            # Every distributed worker takes as many steps as the one with the most batches.
            self._num_batches = max(math.ceil(n / self.batch_size) for n in per_worker)
        return self._num_batches

    def pass_state(self, upcoming: bool) -> Optional[Dict[str, Any]]:
        """
        What a pass takes over from the passes before it: the state of Python's random generator
        at its start, and the sorting keys. Of the pass in progress, or, between passes
        (`upcoming`), of the next one. None with `batches_per_epoch`, whose passes go on reading
        where the one before stopped.
        """
        if self.batches_per_epoch is not None:
            return None
        if upcoming:
            return {"random": random.getstate(), "sorting_keys": self.sorting_keys}
        return self._pass_start

    def skip_passes(self, passes: int, state: Dict[str, Any]) -> None:
        """
        Makes the next `passes` passes yield `len(self)` empty placeholders without reading
        anything, and the one after them start from `state` (`pass_state` of that pass), as
        if the skipped ones had been read. For a trainer that resumes from a checkpoint and
        replays the epochs before it without training on them.
        """
        self._skipping = (passes, state)

    def __iter__(self) -> Iterator[TensorDict]:
        if self._skipping is not None:
            passes, state = self._skipping
            if passes:
                self._skipping = (passes - 1, state)
                yield from ({} for _ in range(len(self)))
                return
            self._skipping = None
            random.setstate(state["random"])
            self.sorting_keys = state["sorting_keys"]
        self._pass_start = self.pass_state(upcoming=True)
        batches = super().__iter__()
        if self.batches_per_epoch is None and is_distributed():
            batches = self._balanced(batches)
        yield from batches

    def _iter_batches(self) -> Iterator[TensorDict]:
        # `iter_instances` reads in the worker processes (if any) and indexes the instances.
        for batch in self._batches(self.iter_instances()):
            tensors = self.collate_fn(batch)
            if self.cuda_device is not None:
                if self._pin_memory and self.cuda_device.type == "cuda":
                    tensors = _pinned_to_device(tensors, self.cuda_device)
                else:
                    tensors = nn_util.move_to_device(tensors, self.cuda_device)
            yield tensors

    def _batches(self, instances: Iterable[Instance]) -> Iterator[List[Instance]]:
        """Full batches window by window, the partial one carried on, then the remainder."""
        carried: List[Instance] = []
        for window in lazy_groups_of(iter(instances), self.max_instances_in_memory):
            pool = carried + window
            if self.shuffle:
                random.shuffle(pool)
            if self.bucket_batches:
                # Sorted by length within groups of `bucket_batches` batches, not over the whole
                # window: a batch then spans a share of the length range, not a sliver of it.
                group = self.bucket_batches * self.batch_size
                pool = [
                    instance
                    for start in range(0, len(pool), group)
                    for instance in self._sorted_by_length(pool[start : start + group])
                ]
            batches = [list(group) for group in lazy_groups_of(iter(pool), self.batch_size)]
            if self.bucket_batches and self.shuffle:
                random.shuffle(batches)
            carried = []
            for batch in batches:
                if len(batch) < self.batch_size:
                    carried = batch
                else:
                    yield batch
        if carried:
            yield carried

    def _sorted_by_length(self, pool: List[Instance]) -> List[Instance]:
        """
        `pool` sorted by the length of the sorting keys' fields, with relative noise of
        `padding_noise` when shuffling: AllenNLP's `bucket` sampler, whose sorting this repeats
        rather than calls, because it draws from the random generator even when it does not
        shuffle (so an unshuffled validation pass would change the next epoch's shuffling and
        `--recover`, which skips validation when it replays, would no longer match).
        """
        if self.sorting_keys is None:
            # The longest text field of the first instances (the `bucket` sampler guesses the
            # longest field of any kind).
            texts = [name for name, field in pool[0].fields.items() if isinstance(field, TextField)]
            self.sorting_keys = [
                max(
                    texts or pool[0].fields,
                    key=lambda name: max(len(i.fields[name]) for i in pool[:10]),
                )
            ]
        keys = self.sorting_keys

        def lengths(instance: Instance) -> Tuple[float, ...]:
            values = [len(instance.fields[key]) for key in keys]
            if self.shuffle:
                return tuple(add_noise_to_value(value, self.padding_noise) for value in values)
            return tuple(values)

        return sorted(pool, key=lengths)

    def _balanced(self, batches: Iterator[TensorDict]) -> Iterator[TensorDict]:
        """
        The worker's batches, then empty batches until every distributed worker is done.
        A worker that has no batch at all gets the shape of an empty batch from another one.
        """
        world_size = dist.get_world_size()
        device = nn_util.distributed_device()
        template: Optional[TensorDict] = None
        padding = 0
        for batch in itertools.chain(batches, itertools.repeat(None)):
            if batch is not None and template is None:
                template = empty_batch(batch)
            # Shape: (2,): workers with a batch for this step, workers with a template.
            status = torch.tensor(
                [int(batch is not None), int(template is not None)], device=device
            )
            dist.all_reduce(status)
            if int(status[0]) == 0:
                break
            if int(status[1]) < world_size:
                template = self._shared_template(template)
            if batch is None:
                padding += 1
                batch = template
            assert batch is not None  # once any worker has a batch, every one has the template
            yield batch
        if padding:
            logger.info(
                "Worker %d took %d empty batch(es) after its data, so that every worker "
                "took the same number of steps.",
                dist.get_rank(),
                padding,
            )

    def _shared_template(self, template: Optional[TensorDict]) -> TensorDict:
        """An empty batch from the first worker that has one, for workers that have none."""
        own = None if template is None else nn_util.move_to_device(template, torch.device("cpu"))
        gathered: List[Any] = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, own)
        if template is not None:
            return template
        shared = next(item for item in gathered if item is not None)
        if self.cuda_device is not None:
            shared = nn_util.move_to_device(shared, self.cuda_device)
        return shared


def empty_batch(value: Any) -> Any:
    """The same batch with no examples: tensors cut to batch size 0, lists (metadata) emptied."""
    if isinstance(value, torch.Tensor):
        return value[:0]
    if isinstance(value, dict):
        return {key: empty_batch(item) for key, item in value.items()}
    if isinstance(value, list):
        return []
    return value


def _pinned_to_device(tensors: Any, device: torch.device) -> Any:
    """`tensors` (nested dicts, lists, tuples) copied to `device` from page-locked memory."""
    if isinstance(tensors, torch.Tensor):
        return tensors.pin_memory().to(device, non_blocking=True)
    if isinstance(tensors, dict):
        return {key: _pinned_to_device(value, device) for key, value in tensors.items()}
    if isinstance(tensors, (list, tuple)):
        return type(tensors)(_pinned_to_device(value, device) for value in tensors)
    return tensors
