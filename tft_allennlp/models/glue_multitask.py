from typing import Dict

from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models.heads import Head
from allennlp.models.model import Model
from allennlp.models.multitask import MultiTaskModel
from allennlp.modules import Backbone

from tft_allennlp.models.heads.glue_head import GlueHead


@Model.register("tft_glue_multitask")
class GlueMultiTaskModel(MultiTaskModel):
    """
    AllenNLP's `multitask` model for GLUE heads (`tft_glue_head`): one shared backbone, one
    head per task, the sum of the losses of the tasks in a batch. Besides each task's metrics,
    prefixed with its head name as `MultiTaskModel` does (`mrpc_f1`, `stsb_combined_score`,
    ...), reports `glue_average`, the GLUE score: the mean over the tasks of each task's main
    score (`GlueHead.main_score`), taken over the heads that ran since the last reset (all of
    them in a validation pass).

    Registered as a `Model` with name "tft_glue_multitask".

    # Parameters

    vocab : `Vocabulary`
    backbone : `Backbone`
        The shared encoder, e.g. `pretrained_transformer`; the `tft_glue` reader's `tokens`
        reach its `text` through `arg_name_mapping: {backbone: {tokens: "text"}}`.
    heads : `Dict[str, Head]`
        One `tft_glue_head` per task, keyed by the task names of the multitask reader.
    **kwargs
        `MultiTaskModel`'s other parameters (`loss_weights`, `arg_name_mapping`, ...).
    """

    def __init__(
        self, vocab: Vocabulary, backbone: Backbone, heads: Dict[str, Head], **kwargs
    ) -> None:
        others = sorted(name for name, head in heads.items() if not isinstance(head, GlueHead))
        if others:
            raise ConfigurationError(f"tft_glue_multitask needs tft_glue_head heads: {others}.")
        super().__init__(vocab, backbone, heads, **kwargs)

    def output_kinds(self) -> Dict[str, str]:
        """
        Each head's prediction under the head's name, as `MultiTaskModel` returns it
        (`mrpc_logits`, `stsb_score`; see `tft_allennlp.common.output_kinds`).
        """
        return {
            f"{name}_{key}": kind
            for name, head in self._heads.items()
            for key, kind in head.output_kinds().items()  # type: ignore[operator]
        }

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics: Dict[str, float] = {}
        scores = []
        for head_name in sorted(self._heads_called):
            head: GlueHead = self._heads[head_name]  # type: ignore[assignment]
            head_metrics = head.get_metrics(reset)
            metrics.update({f"{head_name}_{key}": value for key, value in head_metrics.items()})
            scores.append(GlueHead.main_score(head_metrics))
        if reset:
            self._heads_called.clear()
        if scores:
            metrics["glue_average"] = sum(scores) / len(scores)
        return metrics
