from typing import Callable, List

from allennlp.data import DatasetReader, Instance
from allennlp.data.dataset_readers import dataset_reader as reader_module
from allennlp.data.dataset_readers.dataset_reader import WorkerInfo


def read_shards(
    monkeypatch, build: Callable[[], DatasetReader], path: str, ranks: int = 2, workers: int = 2
) -> List[List[Instance]]:
    """
    What each of `ranks` distributed processes x `workers` data-loader workers reads of `path`,
    one list per (rank, worker), with AllenNLP's distributed state patched in.
    """
    shards = []
    monkeypatch.setattr(reader_module.util, "is_distributed", lambda: True)
    monkeypatch.setattr(reader_module.dist, "get_world_size", lambda: ranks)
    for rank in range(ranks):
        monkeypatch.setattr(reader_module.dist, "get_rank", lambda: rank)
        for worker in range(workers):
            reader = build()
            reader._set_worker_info(WorkerInfo(workers, worker))
            shards.append(list(reader.read(path)))
    monkeypatch.undo()
    return shards
