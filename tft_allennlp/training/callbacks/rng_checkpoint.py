from typing import Any, Dict

import torch
from allennlp.training.callbacks.callback import TrainerCallback


@TrainerCallback.register("tft_rng_checkpoint")
class RngCheckpoint(TrainerCallback):
    """
    Saves torch's random number generator states with every checkpoint and restores them on
    `allennlp train --recover`, so that a run killed mid-epoch and resumed draws the same
    dropout masks as an uninterrupted run with the same seed, and ends with the same weights and
    metrics (on the CPU, where kernels are deterministic).

    AllenNLP 2.10 already replays the data loader through the epochs it skips on recovery, which
    keeps Python's and NumPy's generators (batch shuffling) in step; but it does not run the
    model there, so torch's generator (dropout) would restart from the seed. The generator
    state is a `ByteTensor`, which loads under torch's `weights_only=True`.

    In distributed training only the primary worker's state is checkpointed, and every worker
    restores it; the resumed run is then valid but not bit-identical to an uninterrupted one.

    Registered as a `TrainerCallback` with name "tft_rng_checkpoint".

    # Parameters

    serialization_dir : `str`
        Supplied by the trainer.
    """

    def state_dict(self) -> Dict[str, Any]:
        state: Dict[str, Any] = {"cpu": torch.get_rng_state()}
        if torch.cuda.is_available():
            state["cuda"] = torch.cuda.get_rng_state_all()
        return state

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        torch.set_rng_state(state_dict["cpu"])
        if "cuda" in state_dict and torch.cuda.is_available():
            cuda_states = state_dict["cuda"][: torch.cuda.device_count()]
            for device, cuda_state in enumerate(cuda_states):
                torch.cuda.set_rng_state(cuda_state, device)
