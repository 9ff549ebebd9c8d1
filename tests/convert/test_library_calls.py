"""A loguru call in forward (vector-quantize-pytorch logs from its k-means init) converts
as written and runs in PyNative; graph mode compiles loguru as if it were the model's
code and cannot bind its logger's methods, and the comment above the line says so and
names the setting that makes graph mode run the call as Python. Measured both ways."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conversion import lines_under
from transpiler.convert.pipeline import convert_source
from transpiler.convert.structural.library_calls import comment

SOURCE = '''
import torch
import torch.nn as nn
from loguru import logger


class Codebook(nn.Module):
    def __init__(self):
        super().__init__()
        self.size = 8
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        if x.shape[0] < self.size:
            logger.warning(f"{x.shape[0]} vectors for a codebook of {self.size}")
        return self.proj(x)


def report(x):
    logger.info("outside compiled code")
'''

RUN = '''
import sys
import numpy as np
import mindspore
sys.path.insert(0, sys.argv[1])
from codebook import Codebook
net = Codebook()
x = mindspore.Tensor(np.ones((2, 4), np.float32))
net(x)
try:
    mindspore.jit(net.construct)(x)
except Exception as error:
    print("graph mode failed:", str(error).splitlines()[0])
else:
    print("graph mode ran")
'''


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("library_calls")
    result = convert_source(SOURCE, str(folder / "codebook.py"))
    (folder / "codebook.py").write_text(result.output)
    return folder, result.output


def test_the_call_in_forward_is_marked(converted):
    _, text = converted
    assert lines_under(text, comment("loguru")) == [
        'logger.warning(f"{x.shape[0]} vectors for a codebook of {self.size}")']


@pytest.mark.parametrize("setting, expected", [(None, "graph mode failed: For function:warning"),
                                               ("loguru", "graph mode ran")])
def test_graph_mode_fails_on_it_and_runs_it_with_the_setting(converted, setting, expected):
    folder, _ = converted
    env = {key: value for key, value in os.environ.items() if key != "MS_JIT_IGNORE_MODULES"}
    if setting:
        env["MS_JIT_IGNORE_MODULES"] = setting
    done = subprocess.run([sys.executable, "-c", RUN, str(folder)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert expected in done.stdout, done.stdout + done.stderr[-2000:]
