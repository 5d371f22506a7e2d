from tft_allennlp.training import learning_rate_schedulers, metrics
