"""Code that reads an Embedding's table as torch names it (``weight``;
MindSpore's nn.Embedding names it ``embedding_table``): weight tying both
ways, ``F.linear(x, emb.weight)``, ``emb.weight.shape`` / ``size``,
``nn.init.normal_(emb.weight)`` (also in an ``apply`` function under
``isinstance(module, nn.Embedding)``), ``emb.weight.data.uniform_``, and
``nn.Embedding.from_pretrained``. The converted models load torch's weights
strictly and give torch's outputs; initialisations draw from torch's
distributions."""

from __future__ import annotations

import textwrap

import mindspore
import numpy as np
import pytest
import torch

from tests.conversion import convert_to, load
from transpiler.proof.weights import map_weights

MODELS = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class LM(nn.Module):
        def __init__(self, vocab=12, dim=6):
            super().__init__()
            self.tok_emb = nn.Embedding(vocab, dim)
            self.pos_emb = nn.Embedding(8, dim)
            self.lm_head = nn.Linear(dim, vocab, bias=False)
            self.lm_head.weight = self.tok_emb.weight
            nn.init.normal_(self.pos_emb.weight, std=0.02)
            self.apply(self._init_weights)
            self.vocab_size = self.tok_emb.weight.shape[0]
            self.dim = self.tok_emb.weight.size(1)

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx):
            x = self.tok_emb(idx) + self.pos_emb.weight[: idx.shape[1]]
            return F.linear(x, self.tok_emb.weight) + self.lm_head(x)


    class RNNModel(nn.Module):
        def __init__(self, ntoken=10, ninp=6, tie=True):
            super().__init__()
            self.encoder = nn.Embedding(ntoken, ninp)
            self.decoder = nn.Linear(ninp, ntoken)
            if tie:
                self.encoder.weight = self.decoder.weight
            self.init_weights()

        def init_weights(self):
            initrange = 0.1
            self.encoder.weight.data.uniform_(-initrange, initrange)
            self.decoder.bias.data.zero_()

        def forward(self, idx):
            return self.decoder(torch.tanh(self.encoder(idx)))


    class Padded(nn.Module):
        def __init__(self, pad=0, vocab=6):
            super().__init__()
            self.padding_idx = pad
            self.emb = nn.Embedding(vocab, 3, self.padding_idx)
            self.out = nn.Linear(3, 2)
            self.apply(self._init)

        def _init(self, module):
            if isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, std=0.5)
                if module.padding_idx is not None:
                    module.weight.data[module.padding_idx].zero_()

        def forward(self, idx):
            return self.out(self.emb(idx))


    class Pretrained(nn.Module):
        def __init__(self, vectors, freeze=True):
            super().__init__()
            self.emb = nn.Embedding.from_pretrained(torch.from_numpy(vectors), freeze=freeze)
            self.proj = nn.Linear(vectors.shape[1], 2)

        def forward(self, idx):
            return self.proj(self.emb(idx)) + self.emb.weight.sum()
    '''
)


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    folder = tmp_path_factory.mktemp("embedding")
    source = folder / "models.py"
    source.write_text(MODELS)
    (folder / "out").mkdir()
    converted = convert_to(source, folder / "out")
    return load(source), load(converted), converted.read_text()


def test_the_table_is_read_under_its_mindspore_name(sides):
    text = sides[2]
    for read in ("self.lm_head.weight = self.tok_emb.embedding_table", "ops.dense(x, self.tok_emb.embedding_table)",
                 "self.tok_emb.embedding_table.shape[0]", "self.encoder.embedding_table = self.decoder.weight",
                 "module.embedding_table.set_data(", "self.pos_emb.embedding_table[: idx.shape[1]]",
                 "self.emb.embedding_table.sum()"):
        assert read in text, read
    assert "TODO(ms-migrate)" not in text


@pytest.mark.parametrize("name", ["LM", "RNNModel"])
def test_tied_tables_load_and_outputs_match(sides, name):
    torch_module, ms_module, _ = sides
    torch.manual_seed(0)
    model, cell = getattr(torch_module, name)(), getattr(ms_module, name)()
    params, report = map_weights(model, cell)
    assert report.ok, report.problems()
    assert len({report.placed[k] for k in model.state_dict() if k.endswith("weight")}) == 1 + (name == "LM")
    assert mindspore.load_param_into_net(cell, params, strict_load=True) == ([], [])
    idx = np.random.RandomState(0).randint(0, 10, (2, 5))
    model.eval()
    cell.set_train(False)
    expected = model(torch.from_numpy(idx)).detach().numpy()
    np.testing.assert_allclose(cell(mindspore.Tensor(idx)).asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_initialisations_follow_torch(sides):
    _, ms_module, _ = sides
    mindspore.set_seed(0)
    lm = ms_module.LM()
    assert lm.lm_head.weight is lm.tok_emb.embedding_table and (lm.vocab_size, lm.dim) == (12, 6)
    for table in (lm.tok_emb.embedding_table, lm.pos_emb.embedding_table):
        assert 0.01 < table.asnumpy().std() < 0.03  # N(0, 0.02), not MindSpore's N(0, 0.01) nor torch's default N(0, 1)
    rnn = ms_module.RNNModel()
    table = rnn.encoder.embedding_table.asnumpy()
    assert rnn.decoder.weight is rnn.encoder.embedding_table
    assert -0.1 <= table.min() < -0.05 and 0.05 < table.max() <= 0.1  # U(-0.1, 0.1)
    assert not rnn.decoder.bias.asnumpy().any()


@pytest.mark.parametrize("freeze", [True, False])
def test_from_pretrained_freezes_as_torch_does(sides, freeze):
    torch_module, ms_module, _ = sides
    vectors = np.random.RandomState(0).standard_normal((7, 3)).astype(np.float32)
    torch.manual_seed(0)
    model, cell = torch_module.Pretrained(vectors, freeze), ms_module.Pretrained(vectors, freeze)
    assert model.emb.weight.requires_grad is (not freeze)
    trainable = {p.name for p in cell.trainable_params()}
    assert ("emb.embedding_table" in trainable) is (not freeze) and "proj.weight" in trainable
    np.testing.assert_array_equal(cell.emb.embedding_table.asnumpy(), vectors)
    params, report = map_weights(model, cell)
    assert report.ok, report.problems()
    mindspore.load_param_into_net(cell, params, strict_load=True)
    idx = np.random.RandomState(1).randint(0, 7, (2, 4))
    expected = model(torch.from_numpy(idx)).detach().numpy()
    np.testing.assert_allclose(cell(mindspore.Tensor(idx)).asnumpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("pad", [0, None])
def test_the_padding_row_starts_at_zero_and_gets_no_gradient(sides, pad):
    """torch zeroes the padding row and leaves it out of the gradient; MindSpore's
    Embedding trains it: the converted class keeps it out, in both modes."""
    torch_module, ms_module, text = sides
    assert "self.emb = EmbeddingWithPadding(" in text
    torch.manual_seed(0)
    model, cell = torch_module.Padded(pad), ms_module.Padded(pad)
    if pad is not None:
        assert not cell.emb.embedding_table.asnumpy()[pad].any() and cell.emb.padding_idx == pad
    mindspore.load_param_into_net(cell, map_weights(model, cell)[0], strict_load=True)
    with torch.no_grad():
        model.emb.weight[0] += 1.0  # a padding row that is not zero: the output reads it, the gradient skips it
    cell.emb.embedding_table.set_data(mindspore.Tensor(model.emb.weight.detach().numpy()))
    idx = np.array([[0, 1, 2, 0], [3, 0, 4, 5]])
    model(torch.from_numpy(idx)).sum().backward()
    def loss(ids):
        return cell(ids).sum()

    grad_fn = mindspore.grad(loss, None, cell.trainable_params())
    for mode in (mindspore.PYNATIVE_MODE, mindspore.GRAPH_MODE):
        mindspore.set_context(mode=mode)
        try:
            grads = dict(zip((p.name for p in cell.trainable_params()), grad_fn(mindspore.Tensor(idx))))
            output = cell(mindspore.Tensor(idx)).asnumpy()
        finally:
            mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
        np.testing.assert_allclose(output, model(torch.from_numpy(idx)).detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(grads["emb.embedding_table"].asnumpy(), model.emb.weight.grad.numpy(), atol=1e-6)
