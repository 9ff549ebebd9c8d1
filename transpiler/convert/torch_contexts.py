"""torch's context managers that the conversion unwraps: ``with torch.no_grad():``
and ``with torch.autocast(...):`` become their bodies, and the same names used as
decorators are dropped (structural/grad_mode.py).

They are listed here, apart from the modules that act on them, because the name
analysis (names.py) needs them too: a module-level alias of one (RAFT's
``autocast = torch.cuda.amp.autocast``) resolves to it where it is entered. The
structural modules import names.py, so names.py cannot import them.
"""

from __future__ import annotations

GRAD_CONTEXTS = frozenset(
    {
        "torch.no_grad",
        "torch.inference_mode",
        "torch.enable_grad",
        "torch.set_grad_enabled",
        "torch.autograd.no_grad",
        "torch.autograd.grad_mode.no_grad",
        "torch.autograd.grad_mode.inference_mode",
    }
)
AUTOCASTS = frozenset({"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast",
                       "torch.amp.autocast_mode.autocast"})
UNWRAPPED_CONTEXTS = GRAD_CONTEXTS | AUTOCASTS
