"""Train a small GPT on a token file, nanoGPT style: gradient accumulation over
micro-steps, mixed precision (autocast + GradScaler when the device has it),
gradient clipping, a cosine learning-rate schedule with warmup, periodic
evaluation, TensorBoard logging and checkpoints that can be resumed from.

    python train_gpt.py --data_dir data/tokens --out_dir out --max_iters 2000
    python train_gpt.py --init_from resume --out_dir out
"""

import argparse
import math
import os
import pathlib
import pickle
import time
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import mindspore
import tensorboardX  # new requirement: pip install tensorboardX (torch.utils.tensorboard's SummaryWriter as a package of its own)
from mindspore import nn, ops


def jit_compile(obj, **options):
    """torch.compile(obj): a Cell stays the Cell, its construct compiled by mindspore.jit; a function is compiled."""
    if isinstance(obj, mindspore.nn.Cell):
        obj.construct = mindspore.jit(obj.construct, **options)
        return obj
    return mindspore.jit(obj, **options)


@dataclass
class GPTConfig:
    block_size: int = 32
    vocab_size: int = 64
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    dropout: float = 0.0
    bias: bool = True


class CausalSelfAttention(nn.Cell):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Dense(config.n_embd, 3 * config.n_embd, has_bias=config.bias)
        self.c_proj = nn.Dense(config.n_embd, config.n_embd, has_bias=config.bias)
        self.attn_dropout = nn.Dropout(p=config.dropout)
        self.resid_dropout = nn.Dropout(p=config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.bias = mindspore.Parameter(
            ops.tril(ops.ones((config.block_size, config.block_size))).view(
                1, 1, config.block_size, config.block_size
            ),
            name="bias",
            requires_grad=False,
        )

    def construct(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(self.n_embd, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).swapaxes(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).swapaxes(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).swapaxes(1, 2)
        att = (q @ k.swapaxes(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = ops.softmax(att, axis=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.swapaxes(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Cell):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Dense(config.n_embd, 4 * config.n_embd, has_bias=config.bias)
        self.gelu = nn.GELU(approximate=False)
        self.c_proj = nn.Dense(4 * config.n_embd, config.n_embd, has_bias=config.bias)
        self.dropout = nn.Dropout(p=config.dropout)

    def construct(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Cell):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm((config.n_embd,), epsilon=1e-05)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm((config.n_embd,), epsilon=1e-05)
        self.mlp = MLP(config)

    def construct(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Cell):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.CellDict(
            dict(
                wte=nn.Embedding(
                    config.vocab_size,
                    config.n_embd,
                    embedding_table=mindspore.common.initializer.Normal(1.0),
                ),
                wpe=nn.Embedding(
                    config.block_size,
                    config.n_embd,
                    embedding_table=mindspore.common.initializer.Normal(1.0),
                ),
                drop=nn.Dropout(p=config.dropout),
                ln_f=nn.LayerNorm((config.n_embd,), epsilon=1e-05),
            )
        )
        self.h = nn.CellList([Block(config) for _ in range(config.n_layer)])
        self.lm_head = nn.Dense(config.n_embd, config.vocab_size, has_bias=False)
        self.transformer.wte.embedding_table = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        print("number of parameters: %.2fM" % (self.get_num_params() / 1e6,))

    def get_num_params(self):
        return sum(p.numel() for p in self.trainable_params())

    def _init_weights(self, module):
        if isinstance(module, nn.Dense):
            module.weight.set_data(
                mindspore.common.initializer.initializer(
                    mindspore.common.initializer.Normal(sigma=0.02, mean=0.0),
                    module.weight.shape,
                    module.weight.dtype,
                )
            )
            if module.bias is not None:
                module.bias.set_data(
                    mindspore.common.initializer.initializer(
                        mindspore.common.initializer.Zero(),
                        module.bias.shape,
                        module.bias.dtype,
                    )
                )
        elif isinstance(module, nn.Embedding):
            module.embedding_table.set_data(
                mindspore.common.initializer.initializer(
                    mindspore.common.initializer.Normal(sigma=0.02, mean=0.0),
                    module.embedding_table.shape,
                    module.embedding_table.dtype,
                )
            )

    def construct(self, idx, targets=None):
        b, t = idx.shape
        assert t <= self.config.block_size, f"Cannot forward sequence of length {t}"
        pos = ops.arange(0, t, dtype=mindspore.int64)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = ops.cross_entropy(
                logits.view(-1, logits.shape[-1]), targets.view(-1), ignore_index=-1
            )
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        param_dict = {
            pn: p
            for pn, p in filter(
                lambda item: item[1].requires_grad, self.parameters_and_names()
            )
            if p.requires_grad
        }
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {"params": decay_params, "weight_decay": weight_decay},
            {"params": nodecay_params, "weight_decay": 0.0},
        ]
        return mindspore.experimental.optim.AdamW(
            optim_groups, lr=learning_rate, betas=betas
        )


def get_args(argv=None):
    parser = argparse.ArgumentParser(description="train a small GPT")
    parser.add_argument("--data_dir", default="data/tokens")
    parser.add_argument("--out_dir", default="out")
    parser.add_argument("--log_dir", default="runs/gpt")
    parser.add_argument("--init_from", default="scratch", choices=["scratch", "resume"])
    parser.add_argument("--eval_interval", type=int, default=10)
    parser.add_argument("--eval_iters", type=int, default=4)
    parser.add_argument("--log_interval", type=int, default=1)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=4)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--block_size", type=int, default=32)
    parser.add_argument("--n_layer", type=int, default=2)
    parser.add_argument("--n_head", type=int, default=2)
    parser.add_argument("--n_embd", type=int, default=32)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--max_iters", type=int, default=30)
    parser.add_argument("--weight_decay", type=float, default=1e-1)
    parser.add_argument("--beta1", type=float, default=0.9)
    parser.add_argument("--beta2", type=float, default=0.95)
    parser.add_argument("--grad_clip", type=float, default=1.0)
    parser.add_argument("--warmup_iters", type=int, default=5)
    parser.add_argument("--lr_decay_iters", type=int, default=30)
    parser.add_argument("--min_lr", type=float, default=1e-4)
    parser.add_argument(
        "--device",
        default="cuda" if mindspore.get_context("device_target") == "GPU" else "cpu",
    )
    parser.add_argument("--dtype", default="float16", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--seed", type=int, default=1337)
    return parser.parse_args(argv)


def main(argv=None):
    args = get_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    mindspore.set_seed(args.seed)
    device_type = "cuda" if "cuda" in args.device else "cpu"
    ptdtype = {
        "float32": mindspore.float32,
        "bfloat16": mindspore.bfloat16,
        "float16": mindspore.float16,
    }[args.dtype]
    ctx = nullcontext()

    train_data = np.memmap(os.path.join(args.data_dir, "train.bin"), dtype=np.uint16, mode="r")
    val_data = np.memmap(os.path.join(args.data_dir, "val.bin"), dtype=np.uint16, mode="r")

    def get_batch(split):
        data = train_data if split == "train" else val_data
        ix = ops.randint(0, len(data) - args.block_size, size=(args.batch_size,))
        x = ops.stack(
            [
                mindspore.Tensor((data[i : i + args.block_size]).astype(np.int64))
                for i in ix
            ]
        )
        y = ops.stack(
            [
                mindspore.Tensor(
                    (data[i + 1 : i + 1 + args.block_size]).astype(np.int64)
                )
                for i in ix
            ]
        )
        return x, y

    iter_num = 0
    best_val_loss = 1e9
    model_args = dict(n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd, block_size=args.block_size,
                      bias=True, vocab_size=64, dropout=args.dropout)
    if args.init_from == "scratch":
        print("Initializing a new model from scratch")
        model = GPT(GPTConfig(**model_args))
    else:
        print(f"Resuming training from {args.out_dir}")
        ckpt_path = os.path.join(args.out_dir, "ckpt.pt")
        checkpoint = mindspore.load_checkpoint(
            str(ckpt_path).removesuffix(".ckpt") + ".ckpt"
        )
        checkpoint = {
            "model": {
                name.removeprefix("model."): value
                for name, value in checkpoint.items()
                if name.startswith("model.")
            },
            "optimizer": {
                name.removeprefix("optimizer."): value
                for name, value in checkpoint.items()
                if name.startswith("optimizer.")
            },
            **pickle.loads(pathlib.Path(str(ckpt_path) + ".pkl").read_bytes()),
        }
        checkpoint_model_args = checkpoint["model_args"]
        for k in ["n_layer", "n_head", "n_embd", "block_size", "bias", "vocab_size"]:
            model_args[k] = checkpoint_model_args[k]
        model = GPT(GPTConfig(**model_args))
        state_dict = checkpoint["model"]
        mindspore.load_param_into_net(model, state_dict)
        iter_num = checkpoint["iter_num"]
        best_val_loss = checkpoint["best_val_loss"]

    scaler = (
        mindspore.amp.DynamicLossScaler(
            scale_value=65536.0, scale_factor=2, scale_window=2000
        )
        if (args.dtype == "float16") and mindspore.get_context("device_target") != "CPU"
        else mindspore.amp.StaticLossScaler(scale_value=1.0)
    )
    optimizer = model.configure_optimizers(args.weight_decay, args.learning_rate, (args.beta1, args.beta2))
    if args.init_from == "resume":
        mindspore.load_param_into_net(optimizer, checkpoint["optimizer"])
    checkpoint = None

    if args.compile:
        print("compiling the model...")
        model = jit_compile(model)

    def estimate_loss():
        out = {}
        model.set_train(False)
        for split in ["train", "val"]:
            losses = ops.zeros(args.eval_iters)
            for k in range(args.eval_iters):
                X, Y = get_batch(split)
                with ctx:
                    logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.set_train(True)
        return out

    def get_lr(it):
        if it < args.warmup_iters:
            return args.learning_rate * (it + 1) / (args.warmup_iters + 1)
        if it > args.lr_decay_iters:
            return args.min_lr
        decay_ratio = (it - args.warmup_iters) / (args.lr_decay_iters - args.warmup_iters)
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
        return args.min_lr + coeff * (args.learning_rate - args.min_lr)

    writer = tensorboardX.SummaryWriter(args.log_dir)
    X, Y = get_batch("train")
    t0 = time.time()
    model.set_train(True)
    if (device_type != "cpu") and (ptdtype in (mindspore.float16, mindspore.bfloat16)):
        model = mindspore.amp.auto_mixed_precision(model, "auto", dtype=ptdtype)
    def forward_fn(X, Y):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / args.gradient_accumulation_steps
        return scaler.scale(loss), loss
    grad_fn = mindspore.value_and_grad(
        forward_fn, None, optimizer.parameters, has_aux=True
    )
    grads = None
    while True:
        lr = get_lr(iter_num)
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr

        if iter_num % args.eval_interval == 0:
            losses = estimate_loss()
            print(
                f"step {iter_num}: train loss {float(losses['train']):.4f}, val loss {float(losses['val']):.4f}"
            )
            writer.add_scalar("val/loss", np.asarray(losses["val"]), iter_num)
            if losses["val"] < best_val_loss:
                best_val_loss = losses["val"]
                if iter_num > 0:
                    checkpoint = {
                        "model": model.parameters_dict(),
                        "optimizer": optimizer.parameters_dict(),
                        "model_args": model_args,
                        "iter_num": iter_num,
                        "best_val_loss": best_val_loss,
                        "config": vars(args),
                    }
                    print(f"saving checkpoint to {args.out_dir}")
                    mindspore.save_checkpoint(
                        {
                            **{
                                "model." + name: value
                                for name, value in checkpoint["model"].items()
                            },
                            **{
                                "optimizer." + name: value
                                for name, value in checkpoint["optimizer"].items()
                            },
                        },
                        os.path.join(args.out_dir, "ckpt.pt"),
                    )
                    pathlib.Path(
                        os.path.join(args.out_dir, "ckpt.pt") + ".pkl"
                    ).write_bytes(
                        pickle.dumps(
                            {
                                "model_args": checkpoint["model_args"],
                                "iter_num": checkpoint["iter_num"],
                                "best_val_loss": checkpoint["best_val_loss"],
                                "config": checkpoint["config"],
                            }
                        )
                    )

        for micro_step in range(args.gradient_accumulation_steps):
            (scaled_loss, loss), micro_grads = grad_fn(X, Y)
            grads = (
                micro_grads
                if grads is None
                else tuple(g + m for g, m in zip(grads, micro_grads))
            )
            grads_unscaled = False
            X, Y = get_batch("train")
        if args.grad_clip != 0.0:
            grads = scaler.unscale(grads)
            grads_unscaled = True
            grads = ops.clip_by_global_norm(grads, args.grad_clip)
        if not grads_unscaled:
            grads = scaler.unscale(grads)
        grads_finite = mindspore.amp.all_finite(grads)
        if grads_finite:
            optimizer(grads)
        scaler.adjust(grads_finite)
        grads = None

        t1 = time.time()
        dt = t1 - t0
        t0 = t1
        if iter_num % args.log_interval == 0:
            lossf = loss.item() * args.gradient_accumulation_steps
            print(f"iter {iter_num}: loss {float(lossf):.4f}, time {dt * 1000:.2f}ms")
            writer.add_scalar("train/loss", np.asarray(lossf), iter_num)
            writer.add_scalar("train/lr", np.asarray(lr), iter_num)
        iter_num += 1
        if iter_num > args.max_iters:
            break
    writer.close()


if __name__ == "__main__":
    main()
