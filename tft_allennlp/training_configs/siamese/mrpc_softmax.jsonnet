// Siamese MRPC, Sentence-BERT's classification objective: [u; v; |u - v|] -> dropout 0.1 ->
// linear -> cross-entropy; accuracy and F1. Base recipe and variables: ../common/siamese.libsonnet
local siamese = import '../common/siamese.libsonnet';
siamese(task='mrpc', directory='MRPC', validation_metric='+combined_score',
        objective={ type: 'tft_softmax', dropout: 0.1 })
