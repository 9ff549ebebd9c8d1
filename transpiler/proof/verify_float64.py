"""Is a gradient that differs from torch's only torch's own float32 rounding?

Two correct float32 implementations can give gradients that differ beyond the
tolerance: in deep randomly initialised networks whose activations grow large,
and wherever a value lands within rounding of a kink (a ReLU input of
-1e-7 in torch and +1e-6 in MindSpore lets a gradient through in one of them
only; a max-pooling window with two nearly equal values). When a MindSpore
gradient differs from torch's, torch computes it again in float64, on a fresh
model with the same weights, inputs and projections: a MindSpore gradient
within tolerance of that, or no farther from it than torch's own float32
gradient (within twice its distance: two float32 implementations of the same
sums round differently, their errors are of the same order, not equal), is as
right as torch's and passes with a note saying so; anything else stays a
mismatch.
"""

from __future__ import annotations

import numpy as np

FLOAT32_ROUNDING = "torch float32 vs float64"  # starts the note of a gradient accepted that way
SAME_ORDER = 2.0  # MindSpore's distance from float64 may be up to this times torch's float32 one


def accept_float32_rounding(differing: dict, float64: dict, rtol: float, atol: float) -> None:
    """``differing``: torch key -> (Difference, torch float32 gradient,
    MindSpore gradient), both in MindSpore's layout; ``float64``: torch key ->
    torch's float64 gradient in the same layout."""
    for key, (diff, torch32, ms) in differing.items():
        reference = float64.get(key)
        if reference is None or reference.shape != ms.shape:
            continue
        torch_error = float(np.max(np.abs(torch32.astype(np.float64) - reference), initial=0.0))
        ms_error = float(np.max(np.abs(ms.astype(np.float64) - reference), initial=0.0))
        if np.allclose(ms, reference, rtol=rtol, atol=atol) or ms_error <= SAME_ORDER * torch_error:
            diff.ok, diff.problem = True, ""
            diff.note = (f"{FLOAT32_ROUNDING}: {torch_error:.2g}, MindSpore vs float64: {ms_error:.2g}; "
                         "float32 rounding")


def float64_copy(build, trained, seed: int):
    """A float64 model from ``build()`` (seeded as the first) holding ``trained``'s weights."""
    import torch

    torch.manual_seed(seed)
    model = build()
    model.load_state_dict(trained.state_dict())
    return model.double().train(trained.training)


def as_float64(array: np.ndarray) -> np.ndarray:
    return array.astype(np.float64) if np.issubdtype(array.dtype, np.floating) else array
