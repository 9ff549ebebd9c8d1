"""Training: optimizers, learning-rate schedulers, data loading, checkpoints and TensorBoard logging."""
