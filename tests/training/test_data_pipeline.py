"""The DataLoader conversion: a torch data pipeline and its MindSpore form
yield the same batches (values, order, count) and keep len()/enumerate()."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.golden_files import ROOT
from transpiler.convert.pipeline import convert_source

SCRIPT = ROOT / "tests" / "data" / "loader_script.py"


def _torch_summary() -> dict:
    import importlib.util

    spec = importlib.util.spec_from_file_location("loader_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return json.loads(json.dumps(module.summary()))


def _mindspore_summary(tmp_path, converted: str) -> dict:
    (tmp_path / "converted_loader.py").write_text(converted, encoding="utf-8")
    code = "import json, converted_loader; print('RESULT ' + json.dumps(converted_loader.summary()))"
    env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(next(l for l in run.stdout.splitlines() if l.startswith("RESULT "))[len("RESULT "):])


def test_converted_pipeline_yields_the_same_batches(tmp_path):
    result = convert_source(SCRIPT.read_text(encoding="utf-8"), "loader_script.py")
    converted = result.output
    assert "TODO(ms-migrate)" not in converted and "torch" not in converted.replace("torch data pipeline", "")
    assert 'column_names=["features", "targets"]' in converted
    assert "python_multiprocessing=False" in converted
    expected = _torch_summary()
    actual = _mindspore_summary(tmp_path, converted)
    assert actual == expected


def test_a_seeded_shuffled_loader_is_flagged():
    """Measured: after mindspore.set_seed every new pass over a shuffled GeneratorDataset
    draws the same order; torch's DataLoader reshuffles each epoch."""
    source = (
        "import torch\ntorch.manual_seed(0)\n"
        "loader = torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True)\n"
        "ordered = torch.utils.data.DataLoader(ds, batch_size=4)\n"
    )
    warnings = [d for d in convert_source(source, "seeded.py").diagnostics if "reshuffles each epoch" in d.message]
    assert [d.line for d in warnings] == [3]
