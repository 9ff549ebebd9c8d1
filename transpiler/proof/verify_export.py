"""``verify --export``: the converted Cell exported as MindIR (``mindspore.export``,
a graph compilation) and loaded back (``nn.GraphCell(mindspore.load(...))``) gives
the outputs the Cell gives in PyNative on the same inputs.

The Cell is exported in eval mode (export is for inference), with the weights
verify converted; the comparison is MindSpore against MindSpore (the PyNative outputs
were compared with torch's already), so a difference is the graph's.
"""

from __future__ import annotations

import os
import tempfile

from transpiler.proof.compare import Difference, compare

EXPORT_PREFIX = "mindir:"


def export_differences(cell, arrays, rtol: float, atol: float, allowed=None) -> list[Difference]:
    """Export ``cell`` on the inputs ``arrays`` (numpy), load the MindIR file, run it
    on them and compare its outputs with the Cell's own (PyNative) outputs."""
    import mindspore

    cell.set_train(False)
    inputs = [mindspore.Tensor(a) for a in arrays]
    expected = cell(*inputs)
    with tempfile.TemporaryDirectory(prefix="ms-migrate-export-") as directory:
        name = os.path.join(directory, "model")
        mindspore.export(cell, *inputs, file_name=name, file_format="MINDIR")
        graph = mindspore.nn.GraphCell(mindspore.load(name + ".mindir"))
        actual = graph(*inputs)
    if isinstance(expected, list):  # a GraphCell returns tuples where construct returned lists
        expected = tuple(expected)
    return compare(expected, actual, rtol, atol, name=EXPORT_PREFIX + "out", allowed=allowed)
