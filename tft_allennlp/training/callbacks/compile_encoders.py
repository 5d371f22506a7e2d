import importlib.util
import logging
import os
import shutil
from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from allennlp.training.callbacks.callback import TrainerCallback

from tft_allennlp.modules.token_embedders.pretrained_transformer_embedder import (
    TftPretrainedTransformerEmbedder,
)
from tft_host_patches.host_state import run_failed_graphs_eagerly

if TYPE_CHECKING:  # for annotations only
    from allennlp.training import GradientDescentTrainer

logger = logging.getLogger(__name__)


def compile_problem(backend: str, device: torch.device) -> Optional[str]:
    """Why `torch.compile` with `backend` cannot run on `device` here; None if it can."""
    if backend != "inductor":
        return None
    if device.type == "cuda" and importlib.util.find_spec("triton") is None:
        return "Triton, which inductor compiles CUDA kernels with, is not installed"
    if device.type == "cpu":
        compiler = os.environ.get("CXX", "c++")
        if shutil.which(compiler) is None:
            return f"no C++ compiler ({compiler}; set CXX), which inductor builds CPU kernels with"
    return None


def compile_counts() -> Dict[str, int]:
    """Graphs compiled and graph breaks met so far in this process (dynamo's counters)."""
    from torch._dynamo.utils import counters

    return {
        "graphs": int(counters["stats"]["unique_graphs"]),
        "graph_breaks": int(sum(counters["graph_break"].values())),
    }


def compile_in_place(model: torch.nn.Module, **options: Any) -> Optional[str]:
    """
    Compiles `model` in place with `torch.compile(**options)`: its whole `compute` where it has
    one (the injector's: encoder, span pooling, heads, losses), else every
    `tft_pretrained_transformer` embedder in it. Says what it compiled; None if nothing.
    """
    compute = getattr(model, "compute", None)
    if callable(compute):
        model.compute = torch.compile(compute, **options)  # type: ignore[assignment]
        return f"{type(model).__name__}.compute"
    encoders = [m for m in model.modules() if isinstance(m, TftPretrainedTransformerEmbedder)]
    for encoder in encoders:
        encoder.compile(**options)
    return f"{len(encoders)} encoder(s)" if encoders else None


@TrainerCallback.register("tft_compile_encoders")
class CompileEncoders(TrainerCallback):
    """
    Compiles the model with `torch.compile` when training starts, in place (checkpoints,
    archives and the optimizer see the same modules and parameters): a model's `compute`, the
    tensors of its forward pass without the metrics, where it has one (the paraphrase injector:
    encoder, span pooling, features, heads and losses as one graph), else its transformer
    encoders (every `tft_pretrained_transformer` embedder, as the GLUE, Siamese and multitask
    models hold them). Both trace without a graph break (AllenNLP's checks that read type ids
    back and the packed span pooling are replaced by equivalent tensor code when traced).
    Sequence lengths vary from batch to batch: torch compiles the first shape as it is and, at
    the second, once more with lengths (and the batch size) as symbols, so a run compiles about
    two graphs for training and two for validation (`dynamic: true` compiles the symbolic one at
    once). At the end of each epoch the log says how many graphs were compiled and how many
    graph breaks met in it.

    Where it cannot compile (inductor without a C++ compiler on the CPU, or without Triton on a
    GPU), one warning says why and training runs eagerly; a graph that fails to compile later
    runs eagerly too (dynamo's `suppress_errors`), with dynamo's warning.

    On the CPU compiling costs more than it saves for a run of the sizes here (22-31 s for
    MiniLM's encoder on this project's 2-core machine, then GLUE steps 1.03-1.10x as fast in
    float32, and every step slower under bfloat16 autocast, the injection's 0.8x:
    `benchmarks/RESULTS.md`, "Compiled and fused steps"): the shipped configs do not compile.

    Registered as a `TrainerCallback` with name "tft_compile_encoders".

    # Parameters

    serialization_dir : `str`
        Supplied by the trainer.
    backend : `str`, optional (default = `"inductor"`)
        `torch.compile`'s backend (`"eager"` and `"aot_eager"` trace without generating code).
    mode : `str`, optional (default = `None`)
        `torch.compile`'s mode: `"default"`, `"reduce-overhead"` (CUDA graphs, for small
        batches whose steps the host's kernel launches bound), `"max-autotune"`.
    dynamic : `bool`, optional (default = `None`)
        `torch.compile`'s `dynamic`: `None` makes lengths symbolic after the first recompile.
    fullgraph : `bool`, optional (default = `False`)
        Refuse graph breaks instead of splitting the graph at them.
    """

    def __init__(
        self,
        serialization_dir: str,
        backend: str = "inductor",
        mode: Optional[str] = None,
        dynamic: Optional[bool] = None,
        fullgraph: bool = False,
    ) -> None:
        super().__init__(serialization_dir)
        self.options: Dict[str, Any] = {
            "backend": backend,
            "mode": mode,
            "dynamic": dynamic,
            "fullgraph": fullgraph,
        }
        self._counts: Optional[Dict[str, int]] = None

    def on_start(
        self, trainer: "GradientDescentTrainer", is_primary: bool = True, **kwargs
    ) -> None:
        model = trainer.model
        device = next(model.parameters()).device
        problem = compile_problem(self.options["backend"], device)
        if problem is not None:
            logger.warning("Not compiling the encoders: %s; training eagerly.", problem)
            return
        what = compile_in_place(model, **self.options)
        if what is None:
            logger.warning("Not compiling: the model has no tft_pretrained_transformer embedder.")
            return
        run_failed_graphs_eagerly()
        self._counts = compile_counts()
        logger.info("Compiling %s with %s.", what, self._describe())

    def on_epoch(
        self,
        trainer: "GradientDescentTrainer",
        metrics: Dict[str, Any],
        epoch: int,
        is_primary: bool = True,
        **kwargs,
    ) -> None:
        if self._counts is None:
            return
        counts = compile_counts()
        logger.info(
            "Epoch %d compiled %d graph(s) and met %d graph break(s).",
            epoch,
            counts["graphs"] - self._counts["graphs"],
            counts["graph_breaks"] - self._counts["graph_breaks"],
        )
        self._counts = counts

    def _describe(self) -> str:
        return ", ".join(f"{key}={value}" for key, value in self.options.items())
