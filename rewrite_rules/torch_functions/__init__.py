"""Functions of the torch namespace (creation, math, reductions, shapes, linear algebra, dtypes, constants) -> mindspore.ops."""
