"""
The parts of `benchmarks/anchor_benchmark.py`, the plugin against the Hugging Face `Trainer` and a
plain batched pass; that script is the entry point, and its docstring has the protocol.

- `processes`: the child processes every side runs in, and their peak RSS;
- `glue_data`: the GLUE examples both sides read (the reader's seeded subsample, the pairs file);
- `hf_trainer_side`, `allennlp_train_side`: one training run of each side;
- `train_rounds`: `train` mode, the sides alternating for `--rounds` rounds, and its tables;
- `predict_sides`: one prediction run of each side;
- `predict_rounds`: `predict` mode, the archive, the rounds, and its tables;
- `padding`: `padding` mode, the padding of each way of batching.
"""
