from tft_allennlp.modules.output_regularizers.bregman_proximal_regularizer import (
    BregmanProximalRegularizer,
)
from tft_allennlp.modules.output_regularizers.output_regularizer import OutputRegularizer
from tft_allennlp.modules.output_regularizers.smoothness_inducing_regularizer import (
    SmoothnessInducingRegularizer,
)
