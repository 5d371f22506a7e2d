from typing import Any, Dict, List, Optional, cast

import torch
from allennlp.common import Lazy
from allennlp.common.checks import ConfigurationError, check_dimensions_match
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import TextFieldEmbedder
from allennlp.modules.seq2vec_encoders import ClsPooler
from allennlp.modules.span_extractors import SpanExtractor
from allennlp.nn import InitializerApplicator, util
from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics import CategoricalAccuracy, FBetaMeasure

from tft_allennlp.common.output_kinds import CLASSIFICATION
from tft_allennlp.modules.phrase_pair_features import PhrasePairFeatures
from tft_allennlp.nn.initializers import classifier_initializer
from tft_allennlp.nn.util import mean_loss


@Model.register("tft_paraphrase_injector")
class ParaphraseInjector(Model):
    """
    Paraphrasal relation injection (Arase & Tsujii, 2019): a pretrained transformer reads the
    cross-encoded pair `[CLS] s [SEP] t [SEP]` and is trained with two classifiers at once,

    - sentential: the final `[CLS]` state -> dropout -> linear -> softmax over
      `paraphrase` / `random` (the `labels` namespace);
    - phrasal: each phrase pair's source and target spans are pooled by `span_extractor`,
      combined by `phrase_pair_features`, then dropout -> linear -> softmax over `paraphrase` /
      `random` / `in_paraphrase` (the `phrase_labels` namespace; two classes in binary mode),

    with loss `L = w_s * Ls + w_p * Lp` (cross-entropy each; `Ls` is averaged over the sentence
    pairs and `Lp` over the real phrase pairs of the batch, in distributed training of all
    workers' batches: `tft_allennlp.nn.util.mean_loss`). A weight of 0 removes that head: the
    paper's ablations +sentence (`phrase: 0`) and +3way-PP / +binary-PP (`sentence: 0`). After
    training, the encoder is what matters: export it with `allennlp tft-export`.

    Registered as a `Model` with name "tft_paraphrase_injector".

    # Parameters

    vocab : `Vocabulary`
        Holds the sentence labels (`labels`) and phrase labels (`phrase_labels`).
    text_field_embedder : `TextFieldEmbedder`
        Embeds `tokens`, normally a `pretrained_transformer` embedder.
    span_extractor : `Lazy[SpanExtractor]`
        Pools a phrase's wordpiece vectors: `tft_max_pooling` (paper) or `tft_mean_pooling`
        (follow-up). Its `input_dim` defaults to the embedder's output dimension; if given, it
        must equal it.
    phrase_pair_features : `PhrasePairFeatures`
        `tft_elaborate` (`[hs; ht; hs*ht; |hs-ht|]`) or `tft_concat` (`[hs; ht]`).
    dropout : `float`, optional (default = `0.2`)
        Dropout before each classifier.
    loss_weights : `Dict[str, float]`, optional (default = `{"sentence": 1.0, "phrase": 1.0}`)
    initializer : `InitializerApplicator`, optional
        Applied after both classifiers have been initialised like BERT's (normal, std 0.02; zero
        bias).
    """

    default_predictor = "tft_phrase_pairs"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        span_extractor: Lazy[SpanExtractor],
        phrase_pair_features: PhrasePairFeatures,
        dropout: float = 0.2,
        loss_weights: Optional[Dict[str, float]] = None,
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._loss_weights = {"sentence": 1.0, "phrase": 1.0, **(loss_weights or {})}
        if set(self._loss_weights) != {"sentence", "phrase"}:
            raise ConfigurationError("loss_weights takes 'sentence' and 'phrase' only.")
        if not any(weight > 0 for weight in self._loss_weights.values()):
            raise ConfigurationError("At least one of the loss weights must be positive.")
        self._text_field_embedder = text_field_embedder
        hidden_dim = text_field_embedder.get_output_dim()
        self._span_extractor = span_extractor.construct(input_dim=hidden_dim)
        self._phrase_pair_features = phrase_pair_features
        self._dropout = torch.nn.Dropout(dropout)
        check_dimensions_match(
            hidden_dim,
            self._span_extractor.get_input_dim(),
            "text field embedder output dim",
            "span extractor input dim",
        )
        self._sentence_classifier: Optional[torch.nn.Linear] = None
        self._phrase_classifier: Optional[torch.nn.Linear] = None
        self._metrics: Dict[str, Any] = {}
        if self._loss_weights["sentence"] > 0:
            self._cls_pooler = ClsPooler(hidden_dim)
            self._sentence_classifier = torch.nn.Linear(hidden_dim, vocab.get_vocab_size("labels"))
            self._metrics["sentence_accuracy"] = CategoricalAccuracy()
        if self._loss_weights["phrase"] > 0:
            feature_dim = phrase_pair_features.get_output_dim(self._span_extractor.get_output_dim())
            num_phrase_labels = vocab.get_vocab_size("phrase_labels")
            self._phrase_classifier = torch.nn.Linear(feature_dim, num_phrase_labels)
            self._metrics["phrase_accuracy"] = CategoricalAccuracy()
            self._metrics["phrase_f1"] = FBetaMeasure(average=None)
        self._metrics_updated = False
        # Since the metrics' last reset: sentence pairs given phrase labels, their aligned
        # (paraphrase) phrase pairs, and the file the first one came from.
        self._phrase_counts = {"sentence pairs": 0, "aligned phrase pairs": 0}
        self._phrase_source: Optional[str] = None
        classifier_initializer("_sentence_classifier", "_phrase_classifier")(self)
        if initializer is not None:
            initializer(self)

    def output_kinds(self) -> Dict[str, str]:
        """
        `sentence_logits` where there is a sentence head (see
        `tft_allennlp.common.output_kinds`); the phrase logits, one row per phrase pair, are not
        one prediction per example.
        """
        return {"sentence_logits": CLASSIFICATION} if self._sentence_classifier is not None else {}

    def forward(  # type: ignore
        self,
        tokens: TextFieldTensors,
        source_spans: torch.LongTensor,
        target_spans: torch.LongTensor,
        label: Optional[torch.LongTensor] = None,
        phrase_labels: Optional[torch.LongTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        # Parameters

        tokens : `TextFieldTensors`
            The wordpieces of `[CLS] s [SEP] t [SEP]`.
        source_spans : `torch.LongTensor`
            Shape `(batch_size, num_pairs, 2)`: inclusive wordpiece spans of the source phrases;
            padding is `(-1, -1)`.
        target_spans : `torch.LongTensor`
            Same shape: the target phrase of each pair.
        label : `torch.LongTensor`, optional
            Shape `(batch_size,)`: sentence labels.
        phrase_labels : `torch.LongTensor`, optional
            Shape `(batch_size, num_pairs)`: phrase-pair labels (-1 on padding).
        metadata : `List[Dict[str, Any]]`, optional
            From the reader; unused by the computation.

        # Returns

        `sentence_probs` `(batch_size, num_labels)`, `phrase_probs`
        `(batch_size, num_pairs, num_phrase_labels)` and `phrase_mask` `(batch_size, num_pairs)`
        for the heads that exist, and `loss` when labels are given.
        """
        output = self.compute(tokens, source_spans, target_spans, label, phrase_labels)
        losses: Dict[str, Optional[torch.Tensor]] = {}
        if "sentence_losses" in output:
            sentence_logits = output["sentence_logits"]
            sentence_losses = output.pop("sentence_losses")
            losses["sentence"] = mean_loss(sentence_losses, sentence_logits, self.training)
            self._metrics["sentence_accuracy"](sentence_logits, label)
        if "pair_losses" in output:
            assert phrase_labels is not None
            phrase_logits, phrase_mask = output["phrase_logits"], output["phrase_mask"]
            # Shape: (num_real_pairs,): the loss is averaged over the batch's real pairs.
            pair_losses = output.pop("pair_losses")[phrase_mask]
            losses["phrase"] = mean_loss(pair_losses, phrase_logits, self.training)
            self._count_phrase_pairs(phrase_labels, phrase_mask, metadata)
            self._metrics["phrase_accuracy"](phrase_logits, phrase_labels, phrase_mask)
            self._metrics["phrase_f1"](phrase_logits, phrase_labels, phrase_mask)

        # An empty padding batch of `tft_streaming` has no loss in evaluation (`mean_loss`).
        weighted = [
            self._loss_weights[name] * loss for name, loss in losses.items() if loss is not None
        ]
        if weighted:
            output["loss"] = cast(torch.Tensor, sum(weighted))
        if losses:
            self._metrics_updated = True
        return output

    def compute(
        self,
        tokens: TextFieldTensors,
        source_spans: torch.LongTensor,
        target_spans: torch.LongTensor,
        label: Optional[torch.LongTensor] = None,
        phrase_labels: Optional[torch.LongTensor] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        `forward`'s tensors, without what reads values back to Python (the metrics, the losses'
        means over the real pairs and the distributed batch), so that `torch.compile` can take it
        as a whole (`tft_compile_encoders` compiles it): the outputs, and `sentence_losses`
        `(batch_size,)` and `pair_losses` `(batch_size, num_pairs)` (padding pairs included,
        which `forward` leaves out) when labels are given.
        """
        # Shape: (batch_size, num_wordpieces, hidden_dim)
        embedded = self._text_field_embedder(tokens)
        # Shape: (batch_size, num_wordpieces)
        token_mask = util.get_text_field_mask(tokens)
        output: Dict[str, torch.Tensor] = {}

        if self._sentence_classifier is not None:
            # Shape: (batch_size, hidden_dim): the final [CLS] state.
            cls_vector = self._cls_pooler(embedded, token_mask)
            # Shape: (batch_size, num_labels)
            sentence_logits = self._sentence_classifier(self._dropout(cls_vector))
            output["sentence_logits"] = sentence_logits
            output["sentence_probs"] = torch.softmax(sentence_logits, dim=-1)
            if label is not None:
                # Shape: (batch_size,)
                output["sentence_losses"] = torch.nn.functional.cross_entropy(
                    sentence_logits, label, reduction="none"
                )

        if self._phrase_classifier is not None:
            # Shape: (batch_size, num_pairs)
            phrase_mask = source_spans[:, :, 0] >= 0
            # Shape: (batch_size, num_pairs, pooled_dim)
            source_vectors = self._span_extractor(embedded, source_spans, token_mask, phrase_mask)
            target_vectors = self._span_extractor(embedded, target_spans, token_mask, phrase_mask)
            # Shape: (batch_size, num_pairs, feature_dim)
            features = self._phrase_pair_features(source_vectors, target_vectors)
            # Shape: (batch_size, num_pairs, num_phrase_labels)
            phrase_logits = self._phrase_classifier(self._dropout(features))
            output["phrase_logits"] = phrase_logits
            output["phrase_probs"] = torch.softmax(phrase_logits, dim=-1)
            output["phrase_mask"] = phrase_mask
            if phrase_labels is not None:
                # Shape: (batch_size, num_pairs): each pair's own cross-entropy (a padding pair's,
                # against label 0, is left out by `forward`).
                output["pair_losses"] = torch.nn.functional.cross_entropy(
                    phrase_logits.flatten(0, 1), phrase_labels.clamp(min=0).flatten(),
                    reduction="none",
                ).view(phrase_labels.shape)  # fmt: skip
        return output

    def make_output_human_readable(
        self, output_dict: Dict[str, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        """
        Adds `sentence_label` and, per example, `phrase_labels` and `phrase_paraphrase_probs`
        for its real phrase pairs (padding removed).
        """
        if "sentence_probs" in output_dict:
            output_dict["sentence_label"] = [  # type: ignore
                self.vocab.get_token_from_index(index, "labels")
                for index in output_dict["sentence_probs"].argmax(-1).tolist()
            ]
        if "phrase_probs" in output_dict:
            paraphrase = self.vocab.get_token_index("paraphrase", "phrase_labels")
            labels, probabilities = [], []
            for probs, mask in zip(output_dict["phrase_probs"], output_dict["phrase_mask"]):
                real = probs[mask]
                labels.append(
                    [
                        self.vocab.get_token_from_index(i, "phrase_labels")
                        for i in real.argmax(-1).tolist()
                    ]
                )
                probabilities.append(real[:, paraphrase].tolist())
            output_dict["phrase_labels"] = labels  # type: ignore
            output_dict["phrase_paraphrase_probs"] = probabilities  # type: ignore
        return output_dict

    def _count_phrase_pairs(
        self,
        phrase_labels: torch.Tensor,
        phrase_mask: torch.Tensor,
        metadata: Optional[List[Dict[str, Any]]],
    ) -> None:
        paraphrase = self.vocab.get_token_index("paraphrase", "phrase_labels")
        self._phrase_counts["sentence pairs"] += phrase_mask.size(0)
        aligned = (phrase_labels == paraphrase) & phrase_mask
        self._phrase_counts["aligned phrase pairs"] += int(aligned.sum())
        if self._phrase_source is None and metadata:
            self._phrase_source = metadata[0].get("file")

    def _check_phrase_pairs(self) -> None:
        """
        Raises when the phrase head saw sentence pairs but not one aligned phrase pair since
        the last reset (over all distributed workers): it had no paraphrase to learn or score,
        and its metrics would mean nothing (0.0 without any phrase pair at all).
        """
        pairs, aligned = (
            int(dist_reduce_sum(torch.tensor(self._phrase_counts[key])))
            for key in ("sentence pairs", "aligned phrase pairs")
        )
        if pairs and not aligned:
            raise ConfigurationError(
                f"{self._phrase_source or 'the data'}: no aligned phrase pairs in {pairs} "
                "sentence pairs: the phrase head has no paraphrase to learn or score; "
                "align the corpus with `allennlp tft-align`, or leave the phrase head out "
                "(`model.loss_weights.phrase: 0`)"
            )

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        if reset and self._phrase_classifier is not None:
            self._check_phrase_pairs()
            self._phrase_counts = {key: 0 for key in self._phrase_counts}
            self._phrase_source = None
        metrics: Dict[str, float] = {}
        if not self._metrics_updated:
            return {name: 0.0 for name in self._metrics if name != "phrase_f1"}
        for name, metric in self._metrics.items():
            if name == "phrase_f1":
                f1 = metric.get_metric(reset)["fscore"]
                for index, value in enumerate(f1):
                    label = self.vocab.get_token_from_index(index, "phrase_labels")
                    metrics[f"phrase_f1_{label}"] = float(value)
            else:
                metrics[name] = float(metric.get_metric(reset))
        if reset:
            self._metrics_updated = False
        return metrics
