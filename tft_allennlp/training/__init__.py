from tft_allennlp.training import callbacks, learning_rate_schedulers, metrics, process_group
