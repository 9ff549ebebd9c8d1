"""Window attention as timm's Swin and TinyViT write it: a stem that is a
Sequential filled by attribute assignment (``self.c = nn.Conv2d(...)``, run
by Sequential's own forward) and a subclass of it adding a child; blocks that
register their attention mask as a buffer that is None when the windows are
not shifted; cyclic shifts with ``torch.roll`` whose shifts are read from an
attribute; windows partitioned and merged with view/permute/reshape."""

import torch
import torch.nn as nn


class ConvNorm(nn.Sequential):
    def __init__(self, in_chs, out_chs, ks=1, pad=0):
        super().__init__()
        self.c = nn.Conv2d(in_chs, out_chs, ks, 1, pad, bias=False)
        self.bn = nn.BatchNorm2d(out_chs)
        nn.init.constant_(self.bn.weight, 1.5)


class ConvNormAct(ConvNorm):
    def __init__(self, in_chs, out_chs, ks=1, pad=0):
        super().__init__(in_chs, out_chs, ks, pad)
        self.act = nn.GELU()


def window_partition(x, window):
    B, H, W, C = x.shape
    x = x.view(B, H // window, window, W // window, window, C)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(-1, window * window, C)


def window_reverse(windows, window, H, W):
    C = windows.shape[-1]
    x = windows.view(-1, H // window, W // window, window, window, C)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(-1, H, W, C)


class WindowBlock(nn.Module):
    def __init__(self, dim=8, heads=2, size=4, window=2, shift=0):
        super().__init__()
        self.heads = heads
        self.window = window
        self.shift_size = (shift, shift)
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("attn_mask", None, persistent=False)
        attn_mask = self.get_attn_mask(size)
        self.register_buffer("attn_mask", attn_mask, persistent=False)

    def get_attn_mask(self, size):
        """-100 between positions the shift brought together from different regions; None without a shift."""
        if not any(self.shift_size):
            return None
        regions = torch.zeros(1, size, size, 1)
        count = 0
        for h in (slice(0, -self.window), slice(-self.window, -self.shift_size[0]), slice(-self.shift_size[0], None)):
            for w in (slice(0, -self.window), slice(-self.window, -self.shift_size[1]), slice(-self.shift_size[1], None)):
                regions[:, h, w, :] = count
                count += 1
        windows = window_partition(regions, self.window).squeeze(-1)
        mask = windows.unsqueeze(1) - windows.unsqueeze(2)
        return mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0)

    def forward(self, x):
        B, H, W, C = x.shape
        shortcut = x
        x = self.norm(x)
        if any(self.shift_size):
            x = torch.roll(x, shifts=(-self.shift_size[0], -self.shift_size[1]), dims=(1, 2))
        windows = window_partition(x, self.window)
        n = windows.shape[1]
        qkv = self.qkv(windows).reshape(-1, n, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * (C // self.heads) ** -0.5
        if self.attn_mask is not None:
            count = self.attn_mask.shape[0]
            attn = attn.view(-1, count, self.heads, n, n) + self.attn_mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, self.heads, n, n)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(-1, n, C)
        x = window_reverse(self.proj(x), self.window, H, W)
        if any(self.shift_size):
            x = torch.roll(x, shifts=self.shift_size, dims=(1, 2))
        return shortcut + x


class WindowNet(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.stem = ConvNormAct(3, dim, 3, 1)
        self.blocks = nn.Sequential(WindowBlock(dim, shift=0), WindowBlock(dim, shift=1))
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        x = self.stem(x).permute(0, 2, 3, 1)
        x = self.blocks(x)
        return self.head(x.mean((1, 2)))


VERIFY = {"WindowNet": ["2,3,4,4"]}
