"""Idioms of published training scripts: log lines that format a loss with
``str.format``/``%``, and an optimizer bound to the name of the ``torch.optim``
import (``import torch.optim as optim`` ... ``optim = torch.optim.Adam(...)``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from tests.conversion import convert_to
from tests.snippets import convert_full, convert_snippet

# -- log lines: str.format and % on a loss ---------------------------------------------------
LOG = """
loss = torch.nn.functional.mse_loss(torch.ones(3) * 1.23456, torch.zeros(3))
epoch = 0
print('Epoch:', '%04d' % (epoch + 1), 'cost =', '{:.6f}'.format(loss))
print('{} {:.3f} {n:d} {v:.2e}'.format(epoch, loss.item(), n=epoch, v=loss * 2), '{0:.3f}/{0:.1e}'.format(loss))
print('%.4f' % loss, '%.2f %d' % (loss, epoch))
"""


def test_format_arguments_that_may_be_tensors_go_through_float():
    converted = convert_snippet(LOG)
    flat = " ".join(converted.split())
    assert '"{:.6f}".format(float(loss))' in flat, converted
    # numbers the file shows are left as written
    assert '.format(epoch, loss.item(), n=epoch, v=float(loss * 2))' in flat, converted
    assert '"{0:.3f}/{0:.1e}".format(float(loss))' in flat, converted
    # % formats a MindSpore tensor through float()/int() as torch does: left as written
    assert "print('%.4f' % loss, '%.2f %d' % (loss, epoch))" in flat, converted


def test_formatted_log_lines_read_like_torch():
    env = {**os.environ, "GLOG_v": "3"}
    results = []
    for program in ("import torch\n" + LOG, convert_full(LOG)):
        run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        results.append([line for line in run.stdout.splitlines() if line.strip()][-3:])
    assert results[0] == results[1] == [
        "Epoch: 0001 cost = 1.524138", "0 1.524 0 3.05e+00 1.524/1.5e+00", "1.5241 1.52 0"], results


# -- the torch.optim import's name rebound to the optimizer ----------------------------------
OPTIM = """
import torch
import torch.nn as nn
import torch.optim as optim

model = nn.Linear(4, 2)
optim = torch.optim.Adam(model.parameters(), lr=1e-3)


def lr():
    return optim.param_groups[0]["lr"]
"""


def test_optimizer_bound_to_the_import_name_converts_and_imports_without_torch(tmp_path):
    source = tmp_path / "src" / "train_copy.py"
    source.parent.mkdir()
    source.write_text(textwrap.dedent(OPTIM))
    out = tmp_path / "out"
    out.mkdir()
    converted = convert_to(source, out).read_text()
    assert "torch" not in converted and "TODO(ms-migrate)" not in converted, converted
    script = textwrap.dedent(f"""
        import json, sys
        from transpiler.proof.no_torch import block_torch
        block_torch()
        sys.path.insert(0, {str(out)!r})
        import mindspore.experimental.optim
        import train_copy
        print(json.dumps([isinstance(train_copy.optim, mindspore.experimental.optim.Optimizer),
                          type(train_copy.optim).__module__, float(train_copy.lr())]))
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**os.environ, "GLOG_v": "3"}, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    is_optimizer, module, lr = json.loads(run.stdout.strip().splitlines()[-1])
    assert is_optimizer and module.startswith("mindspore.experimental.optim"), module
    assert abs(lr - 1e-3) < 1e-9


def test_an_import_error_fallback_does_not_hide_the_import():
    converted = convert_full(textwrap.dedent("""
        try:
            import torch.optim as optim
        except ImportError:
            optim = None
        opt = optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)
    """))
    assert "mindspore.experimental.optim.SGD(" in converted, converted
