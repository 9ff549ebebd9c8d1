"""Train a text classifier with a small Trainer class: the step is spread over
methods (training_step keeps the loss in self.loss, the loop calls backward),
gradients are accumulated over several batches and clipped before each
optimizer step, the learning rate warms up per step, and the trainer logs to
TensorBoard and saves/loads its full state.

    python train_text_trainer.py --data data/text.npz --epochs 3 --accumulation-steps 4
"""

import argparse
import os
import pathlib
import pickle

import numpy as np
import mindspore
import tensorboardX  # new requirement: pip install tensorboardX (torch.utils.tensorboard's SummaryWriter as a package of its own)
from mindspore import nn, ops


class TextClassifier(nn.Cell):
    def __init__(self, vocab_size, embed_dim, hidden_dim, num_classes, dropout=0.1):
        super().__init__()
        self.embedding = nn.Embedding(
            vocab_size,
            embed_dim,
            embedding_table=mindspore.common.initializer.Normal(1.0),
        )
        self.encoder = nn.GRU(embed_dim, hidden_dim, batch_first=True)
        self.dropout = nn.Dropout(p=dropout)
        self.head = nn.Dense(hidden_dim, num_classes)
        # scaled embeddings, as in many NLP codebases
        self.scale = self.embedding.embedding_size**0.5

    def construct(self, tokens):
        embedded = self.embedding(tokens) / self.scale
        outputs, hidden = self.encoder(embedded)
        return self.head(self.dropout(hidden[-1]))


class TokenDataset:
    def __init__(self, tokens, labels):
        self.tokens = tokens
        self.labels = labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        index = int(index)
        return np.asarray(
            mindspore.Tensor(self.tokens[index], dtype=mindspore.int64)
        ), np.asarray(mindspore.Tensor(self.labels[index], dtype=mindspore.int64))


class Trainer:
    def __init__(self, model, train_loader, val_loader, args):
        self.model = model
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.args = args
        no_decay = ["bias", "LayerNorm.weight"]
        grouped_parameters = [
            {
                "params": [
                    p
                    for n, p in filter(
                        lambda item: item[1].requires_grad, model.parameters_and_names()
                    )
                    if not any(nd in n for nd in no_decay)
                ],
                "weight_decay": args.weight_decay,
            },
            {
                "params": [
                    p
                    for n, p in filter(
                        lambda item: item[1].requires_grad, model.parameters_and_names()
                    )
                    if any(nd in n for nd in no_decay)
                ],
                "weight_decay": 0.0,
            },
        ]
        self.optimizer = mindspore.experimental.optim.AdamW(
            grouped_parameters, lr=args.lr
        )
        total_steps = len(train_loader) // args.accumulation_steps * args.epochs
        warmup_steps = max(1, int(total_steps * args.warmup_ratio))
        self.scheduler = mindspore.experimental.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda step: min(1.0, (step + 1) / warmup_steps)
        )
        self.criterion = lambda input, target: ops.cross_entropy(input, target)
        self.writer = tensorboardX.SummaryWriter(args.log_dir)
        self.global_step = 0
        self.epoch = 0

    def training_step(self, batch):
        tokens, labels = batch
        self.logits = self.model(tokens)
        self.loss = self.criterion(self.logits, labels) / self.args.accumulation_steps

    def train_epoch(self):
        self.model.set_train(True)
        running_loss = 0.0
        def forward_fn(batch):
            self.training_step(batch)
            return self.loss
        grad_fn = mindspore.value_and_grad(
            forward_fn, None, self.optimizer.parameters
        )
        grads = None
        for step, batch in enumerate(self.train_loader):
            self.loss, micro_grads = grad_fn(batch)
            grads = (
                micro_grads
                if grads is None
                else tuple(g + m for g, m in zip(grads, micro_grads))
            )
            running_loss += self.loss.item()
            if (step + 1) % self.args.accumulation_steps == 0:
                grads = ops.clip_by_global_norm(grads, self.args.max_grad_norm)
                self.optimizer(grads)
                self.scheduler.step()
                grads = None
                self.global_step += 1
                self.writer.add_scalar("train/loss", running_loss, self.global_step)
                self.writer.add_scalar(
                    "train/lr",
                    np.asarray(self.scheduler.get_last_lr()[0]),
                    self.global_step,
                )
                running_loss = 0.0

    def evaluate(self):
        self.model.set_train(False)
        total, correct, loss_sum = 0, 0, 0.0
        for tokens, labels in self.val_loader:
            logits = self.model(tokens)
            loss_sum += self.criterion(logits, labels).item() * labels.shape[0]
            correct += (logits.argmax(dim=-1) == labels).sum().item()
            total += labels.shape[0]
        return loss_sum / total, correct / total

    def save(self, path):
        mindspore.save_checkpoint(
            {
                **{
                    "model." + name: value
                    for name, value in self.model.parameters_dict().items()
                },
                **{
                    "optimizer." + name: value
                    for name, value in self.optimizer.parameters_dict().items()
                },
            },
            path,
        )
        pathlib.Path(str(path) + ".pkl").write_bytes(
            pickle.dumps(
                {
                    "global_step": self.global_step,
                    "epoch": self.epoch,
                    "args": vars(self.args),
                }
            )
        )

    def load(self, path):
        state = mindspore.load_checkpoint(str(path).removesuffix(".ckpt") + ".ckpt")
        state = {
            "model": {
                name.removeprefix("model."): value
                for name, value in state.items()
                if name.startswith("model.")
            },
            "optimizer": {
                name.removeprefix("optimizer."): value
                for name, value in state.items()
                if name.startswith("optimizer.")
            },
            **pickle.loads(pathlib.Path(str(path) + ".pkl").read_bytes()),
        }
        mindspore.load_param_into_net(self.model, state["model"])
        mindspore.load_param_into_net(self.optimizer, state["optimizer"])
        self.global_step = state["global_step"]
        self.epoch = state["epoch"]
        print(f"resumed from {path}: epoch {self.epoch}, step {self.global_step}, trained with lr {state['args']['lr']}")

    def fit(self):
        while self.epoch < self.args.epochs:
            self.train_epoch()
            val_loss, val_acc = self.evaluate()
            self.epoch += 1
            self.writer.add_scalar("val/loss", np.asarray(val_loss), self.epoch)
            self.writer.add_scalar("val/accuracy", np.asarray(val_acc), self.epoch)
            print(
                f"epoch {self.epoch}: val loss {float(val_loss):.4f}, accuracy {float(val_acc):.3f}"
            )
            self.save(os.path.join(self.args.output_dir, "trainer_state.pt"))
        self.writer.close()


def parse_args(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/text.npz")
    parser.add_argument("--output-dir", default="output")
    parser.add_argument("--log-dir", default="runs/text")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--accumulation-steps", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--warmup-ratio", type=float, default=0.1)
    parser.add_argument("--max-grad-norm", type=float, default=1.0)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    mindspore.set_seed(args.seed)
    os.makedirs(args.output_dir, exist_ok=True)
    data = np.load(args.data)
    vocab_size = int(data["train_tokens"].max()) + 1
    train_set = TokenDataset(data["train_tokens"], data["train_labels"])
    val_set = TokenDataset(data["val_tokens"], data["val_labels"])
    train_loader = mindspore.dataset.GeneratorDataset(
        train_set, column_names=["data", "label"], shuffle=True
    ).batch(args.batch_size, drop_remainder=False)
    val_loader = mindspore.dataset.GeneratorDataset(
        val_set, column_names=["data", "label"], shuffle=False
    ).batch(args.batch_size, drop_remainder=False)
    model = TextClassifier(vocab_size, embed_dim=32, hidden_dim=32, num_classes=int(data["train_labels"].max()) + 1,
                           dropout=args.dropout)
    trainer = Trainer(model, train_loader, val_loader, args)
    if args.resume:
        trainer.load(os.path.join(args.output_dir, "trainer_state.pt"))
    trainer.fit()


if __name__ == "__main__":
    main()
