// Siamese MRPC, cosine embedding loss: 1 - cos for paraphrases, max(0, cos - 0.5) otherwise;
// accuracy and F1 of `cos >= 0.75`. Base recipe and variables: ../common/siamese.libsonnet
local siamese = import '../common/siamese.libsonnet';
siamese(task='mrpc', directory='MRPC', validation_metric='+combined_score',
        objective={ type: 'tft_cosine_embedding', margin: 0.5, threshold: 0.75 })
