"""
Trained model archives (`model.tar.gz`, or a serialization directory) read back and exported:
the encoder as a Hugging Face checkpoint (and a sentence-transformers model), a GLUE classifier
as a Hugging Face sequence classifier, and the cache of exported encoders through which a model
archive serves as `model_name` (`tft_allennlp.common.transformer_source`). `allennlp tft-export`
is the command line over it.
"""

from tft_allennlp.archives.encoder_cache import exported_encoder
from tft_allennlp.common import transformer_source

# The components below this package read a model archive given as `model_name` through it.
transformer_source.read_model_archives_with(exported_encoder)
