// Siamese MRPC, multiple negatives ranking loss (in-batch negatives, scale 20) on the positive
// pairs; accuracy and F1 of `cos >= 0.5`. Base recipe and variables: ../common/siamese.libsonnet
local siamese = import '../common/siamese.libsonnet';
siamese(task='mrpc', directory='MRPC', validation_metric='+combined_score',
        objective={ type: 'tft_multiple_negatives_ranking', scale: 20.0, threshold: 0.5 })
