"""ms-migrate: a source-to-source transpiler from PyTorch to MindSpore."""

__version__ = "0.1.0"
