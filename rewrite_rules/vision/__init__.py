"""torchvision: datasets, transforms, ops layers and image grids."""
