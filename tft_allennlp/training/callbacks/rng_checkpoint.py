import logging
from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from allennlp.training.callbacks.callback import TrainerCallback

from tft_allennlp.data_loaders.streaming_data_loader import StreamingDataLoader

if TYPE_CHECKING:  # for annotations only
    from allennlp.training import GradientDescentTrainer

logger = logging.getLogger(__name__)


@TrainerCallback.register("tft_rng_checkpoint")
class RngCheckpoint(TrainerCallback):
    """
    Saves the random state that training carries from batch to batch with every checkpoint, and
    restores it on `allennlp train --recover`, so that a run killed mid-epoch and resumed draws
    the same batches and dropout masks as an uninterrupted run with the same seed, and ends with
    the same weights and metrics (on the CPU, where kernels are deterministic); and it makes the
    resumption start training at once, however many epochs the checkpoint is into the run.

    AllenNLP 2.10 replays the data loader through the epochs before the checkpoint, reading
    every instance again, so that Python's and NumPy's generators (batch shuffling) end where
    they were; it does not run the model there, so torch's generator (dropout) would restart
    from the seed. This callback restores torch's generator. And with the plugin's
    `tft_streaming` training loader, whose epoch takes over from the ones before it only
    Python's generator and its sorting keys, it saves those as they were at the start of the
    checkpoint's epoch, and makes the loader skip the epochs before it without reading them
    (`StreamingDataLoader.skip_passes`): on the 74k-pair injection corpus, about 3.4 minutes an
    epoch on one core. The epoch of the checkpoint is still replayed up to its batch.

    In distributed training only the primary worker's state is checkpointed, and every worker
    restores that torch state; the resumed run is then valid but not bit-identical to an
    uninterrupted one. Each worker's loader shuffles its own share with its own generator, so
    distributed workers replay every epoch as AllenNLP does. The saved states are tensors and
    plain Python values, which load under torch's `weights_only=True`.

    Registered as a `TrainerCallback` with name "tft_rng_checkpoint".

    # Parameters

    serialization_dir : `str`
        Supplied by the trainer.
    """

    def __init__(self, serialization_dir: str) -> None:
        super().__init__(serialization_dir)
        self._resume: Optional[Dict[str, Any]] = None

    def on_start(
        self, trainer: "GradientDescentTrainer", is_primary: bool = True, **kwargs: Any
    ) -> None:
        super().on_start(trainer, is_primary=is_primary, **kwargs)
        epochs = trainer._start_after_epochs_completed
        loader = self._skippable_loader()
        resume, self._resume = self._resume, None
        if loader is None or resume is None or not epochs:
            return
        if resume["epoch"] != epochs:
            logger.warning(
                "The checkpoint's loader state is of epoch %d, not %d: replaying every epoch.",
                resume["epoch"],
                epochs,
            )
            return
        loader.skip_passes(epochs, resume["state"])
        logger.info(
            "Resuming in epoch %d without reading the %s before it again: the checkpoint holds "
            "the random state they leave.",
            epochs,
            "epoch" if epochs == 1 else f"{epochs} epochs",
        )

    def state_dict(self) -> Dict[str, Any]:
        state: Dict[str, Any] = {"cpu": torch.get_rng_state()}
        if torch.cuda.is_available():
            state["cuda"] = torch.cuda.get_rng_state_all()
        loader = self._skippable_loader()
        if self.trainer is not None and loader is not None:
            # At an epoch's end (no batch of the next one done), the next epoch's start.
            between_epochs = self.trainer._batches_in_epoch_completed == 0
            loader_state = loader.pass_state(upcoming=between_epochs)
            if loader_state is not None:
                state["data_loader"] = {
                    "epoch": self.trainer._epochs_completed,
                    "state": loader_state,
                }
        return state

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        torch.set_rng_state(state_dict["cpu"])
        if "cuda" in state_dict and torch.cuda.is_available():
            cuda_states = state_dict["cuda"][: torch.cuda.device_count()]
            for device, cuda_state in enumerate(cuda_states):
                torch.cuda.set_rng_state(cuda_state, device)
        # Checkpoints written before the loader's state was saved replay every epoch.
        self._resume = state_dict.get("data_loader")

    def _skippable_loader(self) -> Optional[StreamingDataLoader]:
        trainer = self.trainer
        if trainer is None or getattr(trainer, "_distributed", False):
            return None
        loader = getattr(trainer, "data_loader", None)
        return loader if isinstance(loader, StreamingDataLoader) else None
