from tft_allennlp.modules.siamese_losses.cosine_embedding_loss import CosineEmbeddingLoss
from tft_allennlp.modules.siamese_losses.cosine_loss import CosineLoss
from tft_allennlp.modules.siamese_losses.cosine_mse_loss import CosineMseLoss
from tft_allennlp.modules.siamese_losses.multiple_negatives_ranking_loss import (
    MultipleNegativesRankingLoss,
)
from tft_allennlp.modules.siamese_losses.siamese_loss import SiameseLoss
from tft_allennlp.modules.siamese_losses.softmax_loss import SoftmaxLoss
