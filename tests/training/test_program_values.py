"""Values typed across the program: a tensor made in one file (``torch.tensor``)
and passed to a function of another file that never names torch is known as a
tensor there, so ``data.size(0)`` in that function is converted (MindSpore's
Tensor.size is an int: left as is it fails with "'int' object is not callable").
The converted project runs under MindSpore with torch unimportable and prints
what torch prints."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

from transpiler.convert.pipeline import convert_source
from transpiler.convert.project import ProjectIndex

_BLOCK_TORCH = "import sys; sys.modules['torch'] = None; import runpy; runpy.run_path('main.py', run_name='__main__')"


def _tree(root: pathlib.Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def _convert(root: pathlib.Path, out: pathlib.Path) -> dict[str, str]:
    paths = sorted(str(p) for p in root.rglob("*.py"))
    index = ProjectIndex.build(str(root), paths)
    outputs = {}
    for path in paths:
        result = convert_source(pathlib.Path(path).read_text(), path, siblings=index.facts(path))
        assert result.output is not None, [d.one_line() for d in result.diagnostics]
        relative = os.path.relpath(path, root)
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        (out / relative).write_text(result.output)
        outputs[relative] = result.output
    return outputs


def _run(directory: pathlib.Path, block_torch: bool) -> str:
    code = _BLOCK_TORCH if block_torch else "import runpy; runpy.run_path('main.py', run_name='__main__')"
    done = subprocess.run([sys.executable, "-c", code], cwd=directory, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


PROJECT = {
    "data_utils.py": '''
        def batchify(data, bsz):
            nbatch = data.size(0) // bsz
            data = data[: nbatch * bsz]
            return data.view(bsz, -1)


        def count_rows(table):
            return rows_of(table)


        def rows_of(table):
            return table.size(0)


        class Loader:
            def __init__(self, tokens, batch):
                self.tokens = tokens
                self.batch = batch
                self.steps = tokens.size(0) // batch


        class Box:
            def size(self, dim):
                return 7


        def box_size(box):
            return box.size(0)
        ''',
    "main.py": '''
        import torch
        from data_utils import batchify, count_rows, Loader, Box, box_size

        data = torch.tensor([1, 2, 3, 4, 5, 6, 7])
        train = batchify(data, 2)
        print(tuple(train.shape), train.sum().item())
        print(count_rows(data[:5]))
        print(Loader(tokens=data, batch=3).steps)
        print(box_size(Box()))
        ''',
}


def test_a_tensor_made_in_one_file_is_a_tensor_where_another_file_uses_it(tmp_path):
    source, out = tmp_path / "torch", tmp_path / "ms"
    _tree(source, PROJECT)
    outputs = _convert(source, out)
    utils = outputs["data_utils.py"]
    assert "nbatch = data.shape[0] // bsz" in utils
    assert "return table.shape[0]" in utils  # through count_rows(table) -> rows_of(table)
    assert "self.steps = tokens.shape[0] // batch" in utils  # Loader(tokens=...) reaches __init__
    expected = _run(source, block_torch=False)
    assert _run(out, block_torch=True) == expected


def test_a_file_no_call_site_passes_a_tensor_is_left_unchanged(tmp_path):
    source, out = tmp_path / "torch", tmp_path / "ms"
    _tree(source, {
        "shapes.py": '''
            class Box:
                def size(self, dim):
                    return 7


            def box_size(box):
                return box.size(0)
            ''',
        "main.py": '''
            import torch
            from shapes import Box, box_size

            x = torch.zeros(3)
            print(box_size(Box()), x.size(0))
            ''',
    })
    outputs = _convert(source, out)
    assert outputs["shapes.py"] == (source / "shapes.py").read_text()
    assert _run(out, block_torch=True) == "7 3\n"


def test_index_records_tensor_parameters_through_module_imports(tmp_path):
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops_util.py": "def first(x, n=1):\n    return x.size(0)\n",
        "pkg/run.py": "import torch\nfrom . import ops_util\n\ny = torch.ones(2)\nops_util.first(n=2, x=y * 2)\n",
    })
    index = ProjectIndex.build(str(tmp_path), [str(p) for p in tmp_path.rglob("*.py")])
    facts = index.facts(str(tmp_path / "pkg" / "ops_util.py"))
    assert facts.tensor_params == frozenset({"first.x"})
    assert facts  # a file with tensor parameters is converted


# -- errors inside the dataset pipeline name the user's line ---------------------
# MindSpore 2.10 turns an exception raised in a GeneratorDataset source (or a map
# operation) into RuntimeError("Exception thrown from user defined Python function
# in dataset ...") and keeps the user's traceback, with its type and message, in
# that message's "Python Call Stack" (measured: with and without workers, with
# python_multiprocessing, in map). What it does not name is a source that returns
# the wrong shape of sample: a dict from __getitem__ gives "number of returned
# NumPy array is:1" and no line; the converter marks such a loader instead.

RAISING = '''
import torch
from torch.utils.data import Dataset, DataLoader


class Pairs(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"bad sample {i}")
        return torch.full((2,), float(i)), torch.tensor(i % 2)


loader = DataLoader(Pairs(), batch_size=2, shuffle=False)
for x, y in loader:
    print(tuple(x.shape))
'''


def _run_script(directory: pathlib.Path, name: str) -> subprocess.CompletedProcess:
    code = f"import sys; sys.modules['torch'] = None; import runpy; runpy.run_path({name!r}, run_name='__main__')"
    return subprocess.run([sys.executable, "-c", code], cwd=directory, capture_output=True, text=True, timeout=300)


def test_an_error_raised_in_the_dataset_names_the_users_file_and_line(tmp_path):
    source, out = tmp_path / "torch", tmp_path / "ms"
    _tree(source, {"train.py": RAISING})
    converted = _convert(source, out)["train.py"]
    line = next(n for n, text in enumerate(converted.splitlines(), 1) if 'raise ValueError(f"bad sample {i}")' in text)
    done = _run_script(out, "train.py")
    assert done.returncode != 0
    # MindSpore's pipeline prefetches: the error may reach the loop before the second
    # good batch does; no batch holding the bad sample is ever printed
    assert done.stdout.count("(2, 2)") <= 2
    assert f'train.py", line {line}, in __getitem__' in done.stderr
    assert "ValueError: bad sample 5" in done.stderr


def test_a_dataset_returning_a_dict_is_marked_where_its_loader_is_made(tmp_path):
    source, out = tmp_path / "torch", tmp_path / "ms"
    _tree(source, {"train.py": '''
        import torch
        from torch.utils.data import Dataset, DataLoader


        class Pairs(Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                return {"image": torch.zeros(2), "mask": torch.ones(2)}


        data = Pairs()
        loader = DataLoader(data, batch_size=2)
        for batch in loader:
            print(batch["image"].shape)
        '''})
    converted = _convert(source, out)["train.py"]
    assert "TODO(ms-migrate): torch.utils.data.DataLoader: Pairs.__getitem__ returns a dict" in converted
    done = _run_script(out, "train.py")
    assert done.returncode != 0
    assert "Pairs.__getitem__ returns a dict" in done.stderr and "train.py:" in done.stderr
