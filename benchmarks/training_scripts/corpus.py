"""The scripts: public training scripts at pinned commits, each with a tiny
configuration given through its own command-line arguments, and the data it
reads (benchmarks/training_scripts/data.py). Every row was checked on the
torch side first (the loss printed and falling).

Tried and left out, as their torch side does not run on this machine: PetarV-/DGI
``execute.py`` (``scipy.sparse.linalg.eigen.arpack``, gone from SciPy),
chennnM/GCNII and fxia22/pointnet.pytorch (``.cuda()``/``cuda:0`` without a
check; the DeiT and XCiT engines call ``torch.cuda.synchronize()`` unconditionally),
facebookresearch/ConvNeXt (``torch._six``), facebookresearch/mae
(asserts timm 0.3.2), whai362/PVT (mmcv), state-spaces/s4 ``example.py``
(pytorch_lightning), karpathy/llm.c ``train_gpt2.py`` (tiktoken downloads its
vocabulary; the smallest model is GPT-2 124M), L1aoXingyu/pytorch-beginner's
older scripts (``loss.data[0]``), scripts that import matplotlib (not installed
here)."""

from __future__ import annotations

from benchmarks.research.spec import Source
from benchmarks.training_scripts.spec import Script

SOURCES: list[Source] = [
    Source("Diego999/pyGAT", "github", "3664f2dc90cbf971564c0bf186dc794f12446d0c", license="MIT"),
    Source("lucidrains/x-transformers", "github", "9252ed7838021ee61e6c5be0930b3a9a88efdf06", license="MIT"),
    Source("rosinality/glow-pytorch", "github", "97081ff115a694cf04aeedbd58447f33d242c879", license="MIT"),
    Source("graykode/nlp-tutorial", "github", "d05e31ec81d56d70c1db89b99ab07e948f7ebc11", license="MIT"),
    Source("hunkim/PyTorchZeroToAll", "github", "e5a260fac0b4ff1e2ec434fc6f0d962ac97fc289", license="none stated"),
    Source("jcjohnson/pytorch-examples", "github", "0003fcdc606a79951e53bf8f46f8574fa4739f23", license="MIT"),
    Source("L1aoXingyu/pytorch-beginner", "github", "a57dd7ea35c9965a41f4963dee62d38884f92a65", license="MIT"),
    Source("karpathy/ng-video-lecture", "github", "52201428ed7b46804849dea0b3ccf0de9df1a5c3", license="MIT"),
    Source("vinhkhuc/PyTorch-Mini-Tutorials", "github", "bb967869a6ad2c3919b67b0623ce33e36349d413", license="MIT"),
    Source("GunhoChoi/Kind-PyTorch-Tutorial", "github", "6e98e475eda6b1a449a8470384a7978462820e52",
           license="none stated"),
]

_COST = r"Epoch: \d+ cost = ([-\d.]+)"  # nlp-tutorial's print('Epoch:', '%04d' % (epoch + 1), 'cost =', ...)
_GAT = ("--no-cuda", "--epochs", "8", "--hidden", "4", "--nb_heads", "2", "--patience", "100", "--seed", "1")

SCRIPTS: list[Script] = [
    Script("pygat", "Diego999/pyGAT", "train.py", r"loss_train: ([-\d.]+)", _GAT, data="cora",
           note="dense GAT on a 1500-node citation graph (24 features, 3 classes)"),
    Script("pygat_sparse", "Diego999/pyGAT", "train.py", r"loss_train: ([-\d.]+)", _GAT + ("--sparse",), data="cora",
           note="the same script, --sparse: SpGAT's custom autograd Function over COO indices"),
    Script("xt_copy", "lucidrains/x-transformers", "train_copy.py", r"^(?:\d+): ([-\d.]+)$", stop_after=6,
           packages=("torch-einops-utils==0.2.0",),
           note="encoder-decoder copy task, random tokens drawn by the script; constants in the file: "
                "stopped after 6 losses"),
    Script("glow", "rosinality/glow-pytorch", "train.py", r"Loss: ([-\d.]+);",
           ("--batch", "4", "--iter", "8", "--n_flow", "2", "--n_block", "2", "--img_size", "16", "--n_sample", "2",
            "--affine", "{run}/images"), data="image_folder",
           note="Glow on a 2-class 16 px ImageFolder"),
    Script("bigram", "karpathy/ng-video-lecture", "bigram.py", r"step \d+: train loss ([-\d.]+)", stop_after=4,
           note="bigram language model on the repository's input.txt; constants in the file (3000 steps, "
                "evaluation every 300): stopped after 4 evaluations", by_hand="bigram.py"),
    Script("nnlm", "graykode/nlp-tutorial", "1-1.NNLM/NNLM.py", _COST, cwd="1-1.NNLM", stop_after=2,
           note="neural n-gram language model, 5000 epochs in the file (a cost every 1000): stopped after 2 costs",
           by_hand="nnlm.py"),
    Script("textcnn", "graykode/nlp-tutorial", "2-1.TextCNN/TextCNN.py", _COST, cwd="2-1.TextCNN", stop_after=2,
           note="sentence classification CNN, 5000 epochs in the file: stopped after 2 costs",
           by_hand="textcnn.py"),
    Script("textrnn", "graykode/nlp-tutorial", "3-1.TextRNN/TextRNN.py", _COST, cwd="3-1.TextRNN", stop_after=2,
           note="next-word RNN, 5000 epochs in the file: stopped after 2 costs", by_hand="textrnn.py"),
    Script("textlstm", "graykode/nlp-tutorial", "3-2.TextLSTM/TextLSTM.py", _COST, cwd="3-2.TextLSTM",
           note="next-letter LSTM, 1000 epochs in the file (runs to the end)"),
    Script("seq2seq", "graykode/nlp-tutorial", "4-1.Seq2Seq/Seq2Seq.py", _COST, cwd="4-1.Seq2Seq", stop_after=2,
           note="RNN encoder-decoder, 5000 epochs in the file: stopped after 2 costs", by_hand="seq2seq.py"),
    Script("bert", "graykode/nlp-tutorial", "5-2.BERT/BERT.py", _COST, cwd="5-2.BERT", stop_after=3,
           note="BERT pre-training (masked LM + next sentence) on a toy corpus, 100 epochs in the file (a cost every 10): stopped after 3 costs"),
    Script("diabetes", "hunkim/PyTorchZeroToAll", "07_diabets_logistic.py", r"Loss: ([-\d.]+)",
           note="logistic regression (wide and deep) on the repository's diabetes.csv.gz, 100 epochs"),
    Script("diabetes_loader", "hunkim/PyTorchZeroToAll", "08_2_dataset_loade_logistic.py", r"Loss: ([-\d.]+)",
           note="the same through a Dataset and a shuffling DataLoader with 2 workers, 2 epochs"),
    Script("hello_rnn", "hunkim/PyTorchZeroToAll", "12_4_hello_rnn_emb.py", r"epoch: \d+, loss: ([-\d.]+)",
           note="character RNN with an embedding, 100 epochs on 'hihell' -> 'ihello'"),
    Script("cnn_mnist", "hunkim/PyTorchZeroToAll", "10_1_cnn_mnist.py", r"Train Epoch: .*?Loss: ([-\d.]+)",
           data="mnist_raw", stop_after=4,
           note="CNN on torchvision's MNIST (256 synthetic training digits, 9 epochs in the file): "
                "stopped after 4 losses"),
    Script("two_layer_optim", "jcjohnson/pytorch-examples", "nn/two_layer_net_optim.py", r"^\d+ ([-\d.e+]+)$",
           cwd="nn", note="nn.Sequential regression on random data with Adam, 500 steps"),
    Script("two_layer_module", "jcjohnson/pytorch-examples", "nn/two_layer_net_module.py", r"^\d+ ([-\d.e+]+)$",
           cwd="nn", note="a Module subclass trained with SGD, 500 steps"),
    Script("dynamic_net", "jcjohnson/pytorch-examples", "nn/dynamic_net.py", r"^\d+ ([-\d.e+]+)$",
           cwd="nn", note="a Module whose depth is drawn each forward (random.randint), SGD with momentum, 500 steps"),
    Script("fashion_mlp", "L1aoXingyu/pytorch-beginner", "03-Neural Network/neural_network.py",
           r"Finish \d+ epoch, Loss: ([-\d.]+)", cwd="03-Neural Network", data="fashion_mnist_raw",
           note="MLP on torchvision's FashionMNIST (256 synthetic images), the file's 50 epochs with a test pass "
                "each, then its checkpoint (neural_network.pth)"),
    Script("mini_logistic", "vinhkhuc/PyTorch-Mini-Tutorials", "2_logistic_regression.py",
           r"Epoch \d+, cost = ([-\d.]+)", data="mnist_gz", stop_after=3,
           note="softmax regression on gzipped MNIST files at MNIST's sizes (synthetic digits), minibatches sliced "
                "from one tensor, 100 epochs in the file: stopped after 3", by_hand="mini_tutorials.py",
           by_hand_argv=("--hidden", "0")),
    Script("mini_mlp", "vinhkhuc/PyTorch-Mini-Tutorials", "3_neural_net.py", r"Epoch \d+, cost = ([-\d.]+)",
           data="mnist_gz", stop_after=3,
           note="nn.Sequential built with add_module, SGD with momentum, the same data: stopped after 3 epochs",
           by_hand="mini_tutorials.py"),
    Script("char_rnn_hello", "GunhoChoi/Kind-PyTorch-Tutorial", "08_Simple_Char_RNN/Simple_Char_RNN.py",
           r"^(?:tensor\()?(-?\d[\d.]*(?:e[-+]?\d+)?)(?:,|$)", cwd="08_Simple_Char_RNN",
           note="character RNN from Linear cells on one-hot 'hello pytorch', MSE summed over the steps, Adam, "
                "100 epochs; prints the loss tensor itself (torch's repr `tensor(0.56, grad_fn=...)`, "
                "MindSpore 2.10's the bare number)"),
]
