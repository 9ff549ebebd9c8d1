"""The program around the model: devices, the CUDA runtime, mixed precision, autograd patterns and compilation markers."""
