import torch


def classifier_layer(input_dim: int, output_dim: int) -> torch.nn.Linear:
    """
    A linear output layer initialised as BERT initialises its classifiers: weights from a normal
    distribution with standard deviation 0.02, zero bias.
    """
    layer = torch.nn.Linear(input_dim, output_dim)
    torch.nn.init.normal_(layer.weight, std=0.02)
    torch.nn.init.zeros_(layer.bias)
    return layer
