import re
import subprocess
import sys

from allennlp.commands.subcommand import Subcommand
from allennlp.common import Registrable
from allennlp.data import DatasetReader, TokenIndexer, Tokenizer
from allennlp.data.data_loaders import DataLoader
from allennlp.data.data_loaders.multitask_scheduler import MultiTaskScheduler
from allennlp.models import Model
from allennlp.models.heads import Head
from allennlp.modules.backbones import Backbone
from allennlp.modules.span_extractors import SpanExtractor
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.predictors import Predictor
from allennlp.training.callbacks import TrainerCallback
from allennlp.training.checkpointer import Checkpointer
from allennlp.training.learning_rate_schedulers import LearningRateScheduler
from allennlp.training.metrics import Metric
from allennlp.training.optimizers import Optimizer
from allennlp.training.trainer import Trainer

import tft_allennlp  # noqa: F401
from tft_allennlp.alignment.link_rules import LinkRule, OneToManyRule, SimilarityRule
from tft_allennlp.alignment.pair_rules import PairRule
from tft_allennlp.alignment.phrase_aligners import PhraseAligner
from tft_allennlp.dataset_readers.negative_samplers import NegativeSampler
from tft_allennlp.modules.adapters import TransformerAdapters
from tft_allennlp.modules.output_regularizers import OutputRegularizer
from tft_allennlp.modules.phrase_pair_features import PhrasePairFeatures
from tft_allennlp.modules.siamese_losses import SiameseLoss
from tft_experiments.strategies import FineTuningStrategy

REGISTERED = [
    (DatasetReader, "tft_glue", "GlueTsvReader"),
    (DatasetReader, "tft_aligned_paraphrases", "AlignedParaphrasesReader"),
    (Model, "tft_glue_classifier", "GlueClassifier"),
    (Model, "tft_paraphrase_injector", "ParaphraseInjector"),
    (Model, "tft_siamese_pair_classifier", "SiamesePairClassifier"),
    (Model, "tft_smart", "SmartRegularizedModel"),
    (OutputRegularizer, "tft_smoothness_inducing", "SmoothnessInducingRegularizer"),
    (OutputRegularizer, "tft_bregman_proximal", "BregmanProximalRegularizer"),
    (Predictor, "tft_sentence_pair", "SentencePairPredictor"),
    (Predictor, "tft_phrase_pairs", "PhrasePairsPredictor"),
    (Metric, "tft_matthews_correlation", "MatthewsCorrelation"),
    (Metric, "tft_pearson_correlation", "PearsonCorrelation"),
    (Metric, "tft_spearman_correlation", "SpearmanCorrelation"),
    (DataLoader, "tft_streaming", "StreamingDataLoader"),
    (DataLoader, "tft_multitask", "CountingMultiTaskDataLoader"),
    (MultiTaskScheduler, "tft_sequential", "SequentialScheduler"),
    (MultiTaskScheduler, "tft_shuffled", "ShuffledScheduler"),
    (Model, "tft_glue_multitask", "GlueMultiTaskModel"),
    (Head, "tft_glue_head", "GlueHead"),
    (NegativeSampler, "tft_paper", "PaperNegativeSampler"),
    (TokenEmbedder, "tft_pretrained_transformer", "TftPretrainedTransformerEmbedder"),
    (Backbone, "tft_pretrained_transformer", "TftPretrainedTransformerBackbone"),
    (Tokenizer, "tft_pretrained_transformer", "TftPretrainedTransformerTokenizer"),
    (TokenIndexer, "tft_pretrained_transformer", "TftPretrainedTransformerIndexer"),
    (TransformerAdapters, "tft_bottleneck", "BottleneckAdapters"),
    (TransformerAdapters, "tft_exported", "TransformerAdapters"),
    (TransformerAdapters, "lora", "LoraAdapters"),
    (SpanExtractor, "tft_max_pooling", "MaxPoolingSpanExtractor"),
    (SpanExtractor, "tft_mean_pooling", "MeanPoolingSpanExtractor"),
    (PhrasePairFeatures, "tft_elaborate", "ElaborateFeatures"),
    (PhrasePairFeatures, "tft_concat", "ConcatFeatures"),
    (PhrasePairFeatures, "tft_concat_difference", "ConcatDifferenceFeatures"),
    (SiameseLoss, "tft_softmax", "SoftmaxLoss"),
    (SiameseLoss, "tft_cosine_mse", "CosineMseLoss"),
    (SiameseLoss, "tft_cosine_embedding", "CosineEmbeddingLoss"),
    (SiameseLoss, "tft_multiple_negatives_ranking", "MultipleNegativesRankingLoss"),
    (LearningRateScheduler, "tft_linear_with_warmup_fraction", "LinearWithWarmupFraction"),
    (TrainerCallback, "tft_stop_after_decreases", "StopAfterDecreases"),
    (TrainerCallback, "tft_rng_checkpoint", "RngCheckpoint"),
    (TrainerCallback, "tft_recover_finished_run", "RecoverFinishedRun"),
    (TrainerCallback, "tft_parameter_counts", "ParameterCounts"),
    (TrainerCallback, "mlflow", "MlflowCallback"),
    (TrainerCallback, "tft_optuna_pruning", "OptunaPruning"),
    (TrainerCallback, "tft_compile_encoders", "CompileEncoders"),
    (Checkpointer, "tft_atomic", "AtomicCheckpointer"),
    (Trainer, "tft_mixed_precision", "MixedPrecisionTrainer"),
    (Optimizer, "tft_adamw", "FusedAdamWOptimizer"),
    (PhraseAligner, "tft_syntactic", "SyntacticPhraseAligner"),
    (PhraseAligner, "tft_syntactic_basic", "SyntacticBasicPhraseAligner"),
    (PhraseAligner, "tft_learned", "LearnedPhraseAligner"),
    (PhraseAligner, "tft_mutual_argmax", "MutualArgmaxPhraseAligner"),
    (LinkRule, "tft_same_form", "SameForm"),
    (LinkRule, "tft_written_out", "WrittenOut"),
    (LinkRule, "tft_without_periods", "WithoutPeriods"),
    (LinkRule, "tft_same_number", "SameNumber"),
    (LinkRule, "tft_same_lemma", "SameLemma"),
    (LinkRule, "tft_abbreviation", "Abbreviation"),
    (LinkRule, "tft_spelling_variant", "SpellingVariant"),
    (LinkRule, "tft_wordnet_synonym", "WordNetSynonym"),
    (OneToManyRule, "tft_acronym", "Acronym"),
    (OneToManyRule, "tft_split_word", "SplitWord"),
    (SimilarityRule, "tft_mutual_similarity", "MutualSimilarity"),
    (PairRule, "tft_same_content", "SameContent"),
    (PairRule, "tft_tightest_spans", "TightestSpans"),
    (PairRule, "tft_closest_in_length", "ClosestInLength"),
    (FineTuningStrategy, "cross", "Cross"),
    (FineTuningStrategy, "siamese_softmax", "SiameseSoftmax"),
    (FineTuningStrategy, "siamese_cosine_mse", "SiameseCosineMse"),
    (FineTuningStrategy, "siamese_mnr", "SiameseMnr"),
    (FineTuningStrategy, "siamese_cosine_embedding", "SiameseCosineEmbedding"),
    (FineTuningStrategy, "multitask_shuffled", "MultitaskShuffled"),
    (FineTuningStrategy, "multitask_sequential", "MultitaskSequential"),
    (FineTuningStrategy, "multitask_roundrobin", "MultitaskRoundrobin"),
    (FineTuningStrategy, "adapters_houlsby", "AdaptersHoulsby"),
    (FineTuningStrategy, "adapters_not_shared", "AdaptersNotShared"),
    (FineTuningStrategy, "adapters_three_shared", "AdaptersThreeShared"),
    (FineTuningStrategy, "lora", "Lora"),
    (FineTuningStrategy, "smart", "Smart"),
    (Subcommand, "tft-export", "Export"),
    (Subcommand, "tft-align", "Align"),
    (Subcommand, "tft-show", "Show"),
    (Subcommand, "tft-experiment", "Experiment"),
    (Subcommand, "tft-glue-submission", "GlueSubmission"),
    (Subcommand, "tft-configs", "Configs"),
    (Subcommand, "tft-tune", "Tune"),
]


def test_importing_the_package_registers_every_component():
    for base, name, class_name in REGISTERED:
        # A registered constructor (`tft_exported`) resolves to the method of the class.
        assert base.by_name(name).__qualname__.split(".")[0] == class_name


def test_every_registration_of_the_plugin_is_listed():
    """
    Every name that a module of the plugin or the harness registers, under any base class
    (AllenNLP's or the plugin's own, listed above or not) and whatever its prefix, is listed above.
    """
    registered = {
        (base, name)
        for base, registry in Registrable._registry.items()
        for name, (subclass, _) in registry.items()
        if subclass.__module__.startswith(("tft_allennlp.", "tft_experiments."))
    }
    assert registered == {(base, name) for base, name, _ in REGISTERED}


def test_the_plugin_registers_nothing_of_the_harness():
    """Importing the plugin alone imports no module of the experiment harness."""
    code = "import sys, tft_allennlp; print([m for m in sys.modules if m.startswith('tft_exp')])"
    printed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert printed.stdout == "[]\n"


def test_each_registered_name_is_its_file_stem():
    """
    The name without its `tft_` (`tft-`) prefix is the stem of its class's file, or the stem
    without a role the base class names: `tft_smart` in `smart.py`, `tft_max_pooling` in
    `max_pooling_span_extractor.py` (a `SpanExtractor`). Named constructors (`tft_exported`)
    are methods of a class named otherwise.
    """
    for base, name, _ in REGISTERED:
        subclass, constructor = Registrable._registry[base][name]
        if constructor is not None:
            continue
        stem = subclass.__module__.rsplit(".", 1)[-1]
        bare = re.sub("^tft[_-]", "", name).replace("-", "_")
        role = re.sub("(?<!^)([A-Z])", r"_\1", base.__name__).lower().split("_")
        suffixes = [""] + ["_" + "_".join(role[start:]) for start in range(len(role))]
        assert stem in [bare + suffix for suffix in suffixes], (name, stem)


def test_config_defaults_reach_jsonnet_without_touching_the_environment():
    """The plugin's defaults for TFT_MODEL, GLUE_DIR, ... apply where AllenNLP reads configs."""
    import os
    import subprocess
    import sys

    from tests import PROJECT_ROOT

    script = (
        "import os, tft_allennlp\n"
        "from allennlp.common import Params\n"
        "defaults = tft_allennlp.CONFIG_DEFAULTS\n"
        "assert not [name for name in defaults if name in os.environ], 'environment changed'\n"
        "params = Params.from_file('training_configs/glue/mrpc.jsonnet')\n"
        "embedder = params['model']['text_field_embedder']['token_embedders']['tokens']\n"
        "print(params['train_data_path'], embedder['model_name'])\n"
        "os.environ['GLUE_DIR'] = 'mine'\n"
        "print(Params.from_file('training_configs/glue/mrpc.jsonnet')['train_data_path'])\n"
    )
    environment = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "TFT_MODEL",
            "GLUE_DIR",
            "TFT_PARAPHRASE_CORPUS",
            "TFT_CUDA_DEVICES",
            "TFT_NUM_NODES",
            "TFT_PRIMARY_ADDRESS",
            "TFT_PRIMARY_PORT",
        )
    }
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PROJECT_ROOT,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines()[-2:] == [
        "glue_data/MRPC/train.tsv bert-base-uncased",
        "mine/MRPC/train.tsv",
    ]
