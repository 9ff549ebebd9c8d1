"""Model code written the way model zoos write it: layer classes passed as
values and called later with torch's arguments, ``**kwargs`` and factory
keywords forwarded into layers, layers subclassed with ``super().__init__``
in torch's terms, a custom autograd Function, TorchScript decorators and
feature checks, and a statement ms-migrate cannot convert outside the model's
forward (it must not stop the module from importing without torch).
``ZooStages`` has timm's layer idioms: a BatchNorm subclass reading its
statistics on ``self`` (BatchNormAct2d), a LayerNorm subclass reading
``self.eps``, a Sequential filled with ``add_module`` by name, stages added
with ``self.add_module(*stage)``, ``module.forward(x)`` on a child, and an
initialiser computing fans with ``nn.init._calculate_fan_in_and_fan_out``."""

from functools import partial
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.jit import Final

_HAS_FUSED_ATTN = hasattr(F, "scaled_dot_product_attention")
_HAS_SILU = "silu" in dir(torch.nn.functional)
_NORMS = dict(batchnorm=nn.BatchNorm2d, layernorm=nn.LayerNorm)


class ScaledSwish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale: float):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return ctx.scale * grad_output * (s * (1 + x * (1 - s))), None


class PReLU(nn.PReLU):
    """A layer subclass calling the torch constructor with torch's keywords."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, inplace: bool = False, device=None, dtype=None):
        super().__init__(num_parameters=num_parameters, init=init, device=device, dtype=dtype)


def create_conv(in_chs, out_chs, kernel_size, **kwargs):
    padding = kwargs.pop("padding", kernel_size // 2)
    return nn.Conv2d(in_chs, out_chs, kernel_size, padding=padding, **kwargs)


class ConvNormAct(nn.Module):
    def __init__(self, in_chs, out_chs, kernel_size=3, norm_layer=nn.BatchNorm2d, act_layer=nn.ReLU,
                 device=None, dtype=None, **kwargs):
        dd = {"device": device, "dtype": dtype}
        super().__init__()
        self.conv = create_conv(in_chs, out_chs, kernel_size, bias=False, **dd, **kwargs)
        self.bn = norm_layer(out_chs, eps=1e-3, **dd)
        self.act = act_layer(inplace=True)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Attention(nn.Module):
    fused_attn: Final[bool]

    def __init__(self, dim, num_heads=2, norm_layer=None, device=None, dtype=None):
        super().__init__()
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.num_heads = num_heads
        self.fused_attn = _HAS_FUSED_ATTN
        self.norm = norm_layer(dim)
        self.qkv = nn.Linear(dim, dim * 3, device=device, dtype=dtype)
        self.proj = nn.Linear(dim, dim, device=device, dtype=dtype)

    @torch.jit.ignore
    def no_weight_decay(self):
        return {"qkv.bias"}

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(self.norm(x)).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        if torch.jit.is_scripting() or not self.fused_attn:
            attn = (q @ k.transpose(-2, -1)) * (C // self.num_heads) ** -0.5
            x = attn.softmax(dim=-1) @ v
        else:
            x = F.scaled_dot_product_attention(q, k, v)
        return self.proj(x.transpose(1, 2).reshape(B, N, C))


class ZooNet(nn.Module):
    def __init__(self, dim=8, act_layer: Optional[type] = nn.GELU, **kwargs):
        super().__init__()
        self.stem = ConvNormAct(3, dim, norm_layer=_NORMS["batchnorm"], stride=2, **kwargs)
        self.prelu = PReLU(dim)
        self.attn = Attention(dim)
        self.act = act_layer()
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        x = self.prelu(self.stem(x))
        x = ScaledSwish.apply(x, 1.5)
        x = self.attn(x.flatten(2).transpose(1, 2))
        return self.head(self.act(x.mean(1)))

    def sample_noise(self, shape):
        # outside the model's forward, and not convertible: marked, and only this method needs torch
        return torch.distributions.Gamma(torch.ones(shape), torch.ones(shape)).sample()


class BatchNormAct2d(nn.BatchNorm2d):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, apply_act=True, act_layer=nn.ReLU, inplace=True,
                 device=None, dtype=None):
        super().__init__(num_features, eps=eps, momentum=momentum, device=device, dtype=dtype)
        self.act = act_layer(inplace=inplace) if apply_act else nn.Identity()

    def forward(self, x):
        x = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, self.training, 0.1, self.eps)
        return self.act(x)


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class ConvNorm(nn.Sequential):
    def __init__(self, in_chs, out_chs):
        super().__init__()
        self.add_module("c", nn.Conv2d(in_chs, out_chs, 3, padding=1, bias=False))
        self.add_module("bn", BatchNormAct2d(out_chs, apply_act=False))


def lecun_normal_(tensor):
    fan_in, _ = nn.init._calculate_fan_in_and_fan_out(tensor)
    nn.init.normal_(tensor, std=(1.0 / fan_in) ** 0.5)


class ZooStages(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        stages = [("stage1", ConvNorm(3, dim)), ("stage2", ConvNorm(dim, dim))]
        for stage in stages:
            self.add_module(*stage)  # stage1, stage2
        self.norm = LayerNorm2d(dim, eps=1e-6)
        self.down = nn.Sequential(nn.Conv2d(dim, dim, 1), BatchNormAct2d(dim))
        self.head = nn.Linear(dim, 3)
        lecun_normal_(self.head.weight)

    def forward(self, x):
        x = self.stage2(self.stage1(x))
        x = self.norm(x) + self.down.forward(x)
        return self.head(x.mean((2, 3)))


VERIFY = {"ZooNet": ["2,3,8,8"], "ZooStages": ["2,3,8,8"]}
