"""The training-step rewrite on the variants torch scripts use, and the
patterns it must mark instead of converting."""

from __future__ import annotations

import pytest

from tests.snippets import convert_full, convert_snippet
from transpiler.convert.pipeline import convert_source
from transpiler.convert.rewriter import MARKER_PREFIX

SUMMED_LOSSES_CLIP_VALUE_ZERO_GRAD_LAST = (
    """
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    out, aux = model(x)
    loss_main = criterion(out, y)
    loss_aux = criterion(aux, y)
    loss = loss_main + 0.4 * loss_aux
    loss.backward()
    nn.utils.clip_grad_value_(model.parameters(), 0.5)
    optimizer.step()
    optimizer.zero_grad()
    print(loss_main.item(), loss_aux.item())
""",
    """
optimizer = mindspore.experimental.optim.SGD(model.trainable_params(), lr=0.1)
def forward_fn(x, y):
    out, aux = model(x)
    loss_main = criterion(out, y)
    loss_aux = criterion(aux, y)
    loss = loss_main + 0.4 * loss_aux
    return loss, loss_main, loss_aux
grad_fn = mindspore.value_and_grad(
    forward_fn, None, optimizer.parameters, has_aux=True
)
for x, y in loader:
    (loss, loss_main, loss_aux), grads = grad_fn(x, y)
    grads = ops.clip_by_value(grads, -0.5, 0.5)
    optimizer(grads)
    print(loss_main.item(), loss_aux.item())
""",
)

STEP_FUNCTION_WITHOUT_LOOP = (
    """
def train_step(model, optimizer: torch.optim.Optimizer, x, y):
    model.train()
    optimizer.zero_grad()
    loss = nn.MSELoss()(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    """
def train_step(model, optimizer: mindspore.experimental.optim.Optimizer, x, y):
    model.set_train(True)
    def forward_fn(x, y):
        loss = nn.MSELoss()(model(x), y)
        return loss
    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
    loss, grads = grad_fn(x, y)
    optimizer(grads)
    return loss.item()
""",
)

LOGGING_BEFORE_BACKWARD_AND_CLIP_NORM = (
    """
def fit(model, loader, epochs):
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        for x, y in loader:
            # forward
            optimizer.zero_grad()
            out = model(x)
            loss = F.cross_entropy(out, y)
            total = loss.item()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            correct = (out.argmax(1) == y).sum().item()
""",
    """
def fit(model, loader, epochs):
    optimizer = mindspore.experimental.optim.AdamW(
        model.trainable_params(), weight_decay=0.0
    )
    model.set_train(True)
    def forward_fn(x, y):
        out = model(x)
        loss = ops.cross_entropy(out, y)
        return loss, out
    grad_fn = mindspore.value_and_grad(
        forward_fn, None, optimizer.parameters, has_aux=True
    )
    for epoch in range(epochs):
        for x, y in loader:
            # forward
            (loss, out), grads = grad_fn(x, y)
            total = loss.item()
            grads = ops.clip_by_global_norm(grads, 1.0)
            optimizer(grads)
            correct = (out.argmax(1) == y).sum().item()
""",
)


@pytest.mark.parametrize(
    "case",
    [SUMMED_LOSSES_CLIP_VALUE_ZERO_GRAD_LAST, STEP_FUNCTION_WITHOUT_LOOP, LOGGING_BEFORE_BACKWARD_AND_CLIP_NORM],
    ids=["summed-losses-clip-value-zero-grad-last", "step-function", "logging-clip-norm-hoisted"],
)
def test_training_step_rewrite(case):
    torch_code, expected = case
    converted = convert_snippet(torch_code)
    assert converted.strip() == expected.strip()  # every line, markers and losses included


def test_rewrite_is_idempotent():
    once = convert_full(SUMMED_LOSSES_CLIP_VALUE_ZERO_GRAD_LAST[0])
    assert convert_source(once, "<again>").output == once


OPTIMIZER = "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"

MARKED = {
    "several backward() calls": OPTIMIZER + """
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    criterion(model(x * 2), y).backward()
    optimizer.step()
""",
    "retain_graph": OPTIMIZER + """
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward(retain_graph=True)
    optimizer.step()
""",
    "the scaler is not made in this file": OPTIMIZER + """
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
    ".grad is read or written": OPTIMIZER + """
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    for p in model.parameters():
        p.grad.data.clamp_(-1, 1)
    optimizer.step()
""",
    "gradient hooks": """
h = model.fc.weight.register_hook(lambda g: g * 0.5)
""",
    # with both forward and backward it becomes a Cell with a bprop (tests/models/zoo_idioms.py)
    "autograd Function without both forward and backward": """
class Clamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clamp(0, 1)
""",
    # bprop is given its inputs by position: no **kwargs (*args: tests/rules/test_autograd_function_forms.py)
    "forward/backward take **kwargs": """
class Gather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, dst, **tensors):
        return torch.stack(tensors)

    @staticmethod
    def backward(ctx, *grad_outputs):
        return (None,) + grad_outputs
""",
    "closure": OPTIMIZER + """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step(closure)
""",
    # hole: a .step() is an optimizer step only when the file shows the object is an optimizer
    "cannot tell that options is a torch optimizer": """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    options.step()
""",
}


@pytest.mark.parametrize("pattern", sorted(MARKED))
def test_patterns_that_cannot_be_rewritten_are_marked_by_name(pattern):
    converted = convert_snippet(MARKED[pattern])
    markers = [line for line in converted.splitlines() if MARKER_PREFIX in line]
    assert any(pattern in line for line in markers), converted
    assert "def forward_fn" not in converted and "grad_fn" not in converted  # never rewritten into something else


def test_optimizer_made_inside_the_loop_defines_the_step_inline():
    converted = convert_snippet(
        """
for lr in (0.1, 0.01):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
"""
    )
    lines = converted.splitlines()
    definition = next(i for i, line in enumerate(lines) if "def forward_fn" in line)
    assert lines[definition].startswith("        def forward_fn(x, y):"), converted
