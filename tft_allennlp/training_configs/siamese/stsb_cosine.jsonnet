// Siamese STS-B, Sentence-BERT's regression objective: cos(u, v) regressed on score / 5 with
// MSE, score = 5 * cos; Pearson and Spearman. Base recipe and variables: ../common/siamese.libsonnet
local siamese = import '../common/siamese.libsonnet';
// Training batches are not grouped by length: the cosine objective has no output bias to start
// at the scores' middle (../glue/stsb.jsonnet's cure for sorted batches), and it was not measured.
siamese(task='stsb', directory='STS-B', validation_metric='+combined_score',
        objective={ type: 'tft_cosine_mse' }) + {
  data_loader+: { bucket_batches: 0 },
}
