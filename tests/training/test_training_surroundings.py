"""What surrounds a training loop converts (or is dropped with a report
line), and what an object is comes from where the file made it, never from
its name.

Golden text for each form; tests/training/test_training_scripts.py runs them in whole
scripts against torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.golden_files import ROOT
from tests.snippets import convert_full, convert_snippet
from transpiler.convert.pipeline import convert_source


def _golden(torch_code: str, expected: str) -> None:
    converted = convert_snippet(textwrap.dedent(torch_code))
    assert converted.strip() == textwrap.dedent(expected).strip(), converted
    once = convert_full(textwrap.dedent(torch_code))
    assert convert_source(once, "<again>").output == once  # converting again changes nothing


def _reports(torch_code: str) -> list[str]:
    result = convert_source("import torch\nimport torch.nn as nn\n" + textwrap.dedent(torch_code), "<x>")
    return [d.message for d in result.diagnostics]


# -- flags, runtime calls, wrappers -------------------------------------------------------
def test_backend_flags_are_dropped_or_mapped_with_a_report_line():
    _golden(
        """
        import torch.backends.cudnn as cudnn
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.set_float32_matmul_precision("high")
        cudnn.deterministic = True
        torch.cuda.manual_seed_all(0)
        torch.cuda.empty_cache()
        """,
        """
        mindspore.set_deterministic(True)
        mindspore.set_seed(0)
        mindspore.runtime.empty_cache()
        """,
    )
    messages = _reports("torch.backends.cudnn.benchmark = True\n")
    assert any("no MindSpore meaning" in m for m in messages), messages


def test_compile_data_parallel_and_the_wrapped_module():
    _golden(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)

        model = Net()
        model = torch.compile(model)
        model = nn.DataParallel(model).to(device)
        features = model.module.fc.in_features
        try:
            y = model(x)
        except torch.cuda.OutOfMemoryError:
            y = None
        """,
        """
        def jit_compile(obj, **options):
            \"\"\"torch.compile(obj): a Cell stays the Cell, its construct compiled by mindspore.jit; a function is compiled.\"\"\"
            if isinstance(obj, mindspore.nn.Cell):
                obj.construct = mindspore.jit(obj.construct, **options)
                return obj
            return mindspore.jit(obj, **options)


        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.fc = nn.Dense(3, 2)

        model = Net()
        model = jit_compile(model)
        features = model.fc.in_channels
        try:
            y = model(x)
        except MemoryError:
            y = None
        """,
    )


AUTOCAST_STEP = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)

{made}
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize("made", ["model = Net()", "model = nn.DataParallel(Net()).to(device)",
                                  "model = torch.compile(nn.DataParallel(Net()))"])
def test_autocast_sets_mixed_precision_on_the_network_also_when_wrapped(made):
    converted = convert_snippet(AUTOCAST_STEP.format(made=made))
    assert 'model = mindspore.amp.auto_mixed_precision(model, "auto", dtype=mindspore.float16)' in converted, converted


def test_autocast_around_no_known_network_is_reported():
    reports = _reports(AUTOCAST_STEP.format(made="model = load_model()"))
    assert any("no network of this file runs inside the autocast context" in r for r in reports), reports


def test_freezing_with_requires_grad_():
    _golden(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.features = nn.Sequential(nn.Linear(3, 3))
                self.head = nn.Linear(3, 2)

        model = Net()
        model.features.requires_grad_(False)
        model.head.requires_grad_()
        x = torch.ones(2)
        x.requires_grad_()
        """,
        """
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.features = nn.SequentialCell(nn.Dense(3, 3))
                self.head = nn.Dense(3, 2)

        model = Net()
        for param in model.features.get_parameters():
            param.requires_grad = False
        for param in model.head.get_parameters():
            param.requires_grad = True
        x = ops.ones(2)
        # TODO(ms-migrate): torch.Tensor.requires_grad_: tensors have no requires_grad in MindSpore; wrap in mindspore.Parameter or take gradients with value_and_grad
        x.requires_grad_()
        """,
    )


# -- formatting tensors -------------------------------------------------------------------
FORMATS = """
loss = torch.nn.functional.mse_loss(torch.ones(3) * 1.23456, torch.zeros(3))
steps = len([1, 2, 3])
lossf = loss.item() * 2
text = f"loss {loss:.3f} ({loss:.2e}), step {steps:d}, doubled {lossf:.2f}, {loss:>10}"
"""


def test_format_specs_on_values_that_may_be_tensors_go_through_float():
    converted = convert_snippet(FORMATS)
    assert 'f"loss {float(loss):.3f} ({float(loss):.2e}), step {steps:d}, doubled {lossf:.2f}, {loss:>10}"' \
        in converted.replace("\n    ", " ").replace("(\n ", "("), converted


def test_formatted_tensors_read_like_torch():
    code = FORMATS.replace(", {loss:>10}", "")
    env = {**os.environ, "GLOG_v": "3"}
    results = []
    for program in ("import torch\n" + code, convert_full(code)):
        run = subprocess.run([sys.executable, "-c", program + "\nprint('TEXT ' + text)"], capture_output=True,
                             text=True, env=env, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        results.append(next(l for l in run.stdout.splitlines() if l.startswith("TEXT ")))
    assert results[0] == results[1] == "TEXT loss 1.524 (1.52e+00), step 3, doubled 3.05"


# -- what an object is: where the file made it ---------------------------------------------------
STEP = """
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize("made", [
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nfor x, y in loader:" + STEP,
    # returned by a function of the file
    "def make(model):\n    return torch.optim.AdamW(model.parameters())\n\n"
    "optimizer = make(model)\nfor x, y in loader:" + STEP,
    # a parameter every call of the function passes an optimizer to
    "def fit(model, optimizer, loader):\n    for x, y in loader:" + STEP.replace("\n    ", "\n        ") +
    "\nfit(model, torch.optim.SGD(model.parameters(), lr=0.1), loader)\n",
    # an annotated parameter
    "def fit(model, optimizer: torch.optim.Optimizer, loader):\n    for x, y in loader:"
    + STEP.replace("\n    ", "\n        "),
    # an attribute set in __init__ from an argument
    "class Trainer:\n    def __init__(self, opt):\n        self.optimizer = opt\n\n"
    "    def fit(self, model, loader):\n        for x, y in loader:" + STEP.replace("\n    ", "\n            ")
    .replace("optimizer.", "self.optimizer.") + "\n\nTrainer(torch.optim.SGD(model.parameters(), lr=0.1))\n",
])
def test_an_optimizer_is_known_from_where_it_was_made(made):
    converted = convert_snippet(made)
    assert "TODO(ms-migrate)" not in converted and "grad_fn" in converted, converted


@pytest.mark.parametrize("unknown, marker", [
    ("for x, y in loader:" + STEP, "cannot tell that optimizer is a torch optimizer"),
    # a name that says optimizer is not evidence; a constructor elsewhere of another kind is not either
    ("opt_state = dict(lr=0.1)\nfor x, y in loader:" + STEP.replace("optimizer", "opt_state"),
     "cannot tell that opt_state is a torch optimizer"),
])
def test_an_object_the_file_does_not_show_is_not_taken_for_an_optimizer(unknown, marker):
    converted = convert_snippet(unknown)
    assert marker in converted and "grad_fn" not in converted, converted


def test_step_of_an_unknown_object_is_left_alone():
    converted = convert_snippet("options.step()\nschedule.step()\nscheduler = torch.optim.lr_scheduler.StepLR(o, 1)\n"
                                "scheduler.step()\n")
    assert "TODO" not in converted and "options.step()" in converted and "schedule.step()" in converted


def test_names_do_not_decide_what_steps():
    """An optimizer called ``state`` made by a function of the file, a scheduler called ``warm``: converted;
    an object called ``scheduler`` of the file's own class and a dict called ``optimizer``: left alone."""
    converted = convert_snippet(
        "class Warmup:\n    def step(self):\n        pass\n\n"
        "def make(model):\n    return torch.optim.Adam(model.parameters(), lr=1e-3)\n\n"
        "state = make(model)\nwarm = torch.optim.lr_scheduler.LambdaLR(state, lambda s: 1.0)\n"
        "scheduler = Warmup()\noptimizer = {'lr': 0.1}\n"
        "for x, y in loader:" + STEP.replace("optimizer.", "state.") + "    warm.step()\n    scheduler.step()\n"
        "print(optimizer['lr'])\n")
    assert "TODO" not in converted, converted
    assert "state(grads)" in converted and "mindspore.value_and_grad(forward_fn, None, state.parameters)" in converted
    assert "mindspore.experimental.optim.lr_scheduler.LambdaLR(state" in converted
    assert "    warm.step()\n    scheduler.step()\n" in converted and "optimizer['lr']" in converted


# -- data ---------------------------------------------------------------------------------------
def test_seeded_split_and_loader_arguments_in_a_dict():
    _golden(
        """
        from torch.utils.data import DataLoader, random_split
        train_set, val_set = random_split(dataset, [90, 10], generator=torch.Generator().manual_seed(0))
        loader_args = dict(batch_size=4, num_workers=2, pin_memory=True)
        train_loader = DataLoader(train_set, shuffle=True, **loader_args)
        """,
        """
        mindspore.dataset.config.set_seed(0)
        train_set, val_set = mindspore.dataset.GeneratorDataset(
            dataset, column_names=["data", "label"], shuffle=False
        ).split([90, 10], randomize=True)
        loader_args = dict(batch_size=4, num_workers=2, pin_memory=True)
        train_loader = train_set.shuffle(train_set.get_dataset_size()).batch(
            loader_args["batch_size"], drop_remainder=False
        )
        """,
    )
