"""torch.nn layers, containers, initialisers and Module methods -> mindspore.nn."""
