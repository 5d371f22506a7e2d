// GLUE stsb: STS-B, regression, Pearson and Spearman correlation. Base recipe and variables: ../common/glue.libsonnet
local glue = import '../common/glue.libsonnet';
// Training batches are not grouped by length: length-sorted batches slow STS-B's first epoch,
// when the regression still learns the scores' offset, and cost dev Pearson at 1k examples
// (benchmarks/RESULTS.md, "STS-B and length bucketing").
glue(task='stsb', directory='STS-B', validation_metric='+combined_score') + {
  data_loader+: { bucket_batches: 0 },
}
