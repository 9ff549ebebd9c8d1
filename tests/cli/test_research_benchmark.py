"""The research benchmark's corpus is well formed and its table prints, with no
network and nothing fetched (benchmarks/research.py)."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from benchmarks.research import corpus  # noqa: E402
from benchmarks.research.build import flatten  # noqa: E402
from benchmarks.research.fetch import SourceMissing, get_source  # noqa: E402
from benchmarks.research.imports import module_names, new_requirements  # noqa: E402
from benchmarks.research.spec import Call, Input, Model, Ref, Source  # noqa: E402


def _research():
    spec = importlib.util.spec_from_file_location("research_benchmark", os.path.join(ROOT, "benchmarks", "research.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SOURCES, MODELS = corpus()
VERSION = re.compile(r"^\d+(\.\d+)*([._-]?(post|dev|a|b|rc)\d*)*$")


def test_ids_are_unique():
    ids = [m.id for m in MODELS]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    names = [s.name for s in SOURCES]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


def test_every_model_has_its_source_and_every_need_exists():
    names = {s.name for s in SOURCES}
    assert not [m.id for m in MODELS if m.source not in names]
    assert not [(s.name, n) for s in SOURCES for n in s.needs if n not in names and n != "timm"]


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_pins_are_exact(source: Source):
    assert source.kind in ("pypi", "github")
    if source.kind == "github":
        assert re.fullmatch(r"[0-9a-f]{40}", source.pin), "a full commit hash"
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", source.name), "owner/name"
    else:
        assert VERSION.match(source.pin), "an exact version"
    assert not os.path.isabs(source.root) and ".." not in source.root.split("/")
    assert all(not os.path.isabs(p) and ".." not in p.split("/") for p in source.convert)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.id)
def test_models_are_well_formed(model: Model):
    assert re.fullmatch(r"[\w.-]+", model.id)
    assert model.module and model.factory and model.kind
    for spec in list(model.inputs) + list(model.keyword_inputs.values()):
        if isinstance(spec, Input):
            assert spec.dtype in ("float32", "int64", "bool")
            assert all(isinstance(d, int) and d > 0 for d in spec.shape)
    assert model.inputs or model.keyword_inputs, "a model is called on something"


def test_enough_of_the_registry():
    pypi = [s for s in SOURCES if s.kind == "pypi" and any(m.source == s.name for m in MODELS)]
    assert len(pypi) >= 12
    assert len([m for m in MODELS if m.source in {s.name for s in pypi}]) >= 30


def test_inputs_are_seeded():
    spec = Input((2, 3))
    first, second = spec.make(np.random.default_rng(0)), spec.make(np.random.default_rng(0))
    assert first.dtype == np.float32 and np.array_equal(first, second)
    tokens = Input((4,), "int64", 2, 5).make(np.random.default_rng(0))
    assert tokens.dtype == np.int64 and tokens.min() >= 2 and tokens.max() < 5
    assert Input((3,), "bool").make(np.random.default_rng(0)).dtype == bool


def test_flatten_walks_outputs_in_order():
    @dataclasses.dataclass
    class Out:
        logits: np.ndarray
        extra: object

    a, b, c = np.zeros(1), np.ones(1), np.full(1, 2.0)
    found = flatten((a, {"z": c, "y": b}, None, 3, Out(a, [b])), lambda v: isinstance(v, np.ndarray), lambda v: v)
    assert [float(x[0]) for x in found] == [0.0, 1.0, 2.0, 0.0, 1.0]


def test_call_and_ref_resolve_in_the_models_module():
    from benchmarks.research.build import resolve

    value = resolve({"a": Call("join", args=("x", "y")), "b": [Ref("sep")]}, "os.path")
    assert value == {"a": os.path.join("x", "y"), "b": [os.sep]}


def test_missing_snapshot_says_what_to_get(tmp_path):
    source = Source("someone/somerepo", "github", "0" * 40)
    with pytest.raises(SourceMissing) as raised:
        get_source(source, str(tmp_path / "work"), str(tmp_path / "mirror"))
    assert str(raised.value).startswith(f"source not available: get github:someone/somerepo at {'0' * 40} into ")
    assert str(tmp_path / "mirror" / "someone+somerepo" / "repo") in str(raised.value)


def test_new_requirements_and_module_names(tmp_path):
    original, converted = tmp_path / "original", tmp_path / "converted"
    for top, body in ((original, "import torch\nimport einops\nfrom . import b\n"),
                      (converted, "import mindspore\nimport numpy\nimport skimage\nimport pkg.b\n")):
        (top / "pkg").mkdir(parents=True)
        (top / "pkg" / "__init__.py").write_text("")
        (top / "pkg" / "a.py").write_text(body)
        (top / "pkg" / "b.py").write_text("import os\n")
        (top / "setup.py").write_text("import setuptools\n")
    assert new_requirements(str(original), str(converted), ("pkg",), set()) == ["skimage"]
    assert module_names(str(original), ()) == [("pkg", "pkg/__init__.py"), ("pkg.a", "pkg/a.py"), ("pkg.b", "pkg/b.py")]


def test_table_and_summary(capsys):
    research = _research()
    rows = [
        {"model": "unet", "source": "monai", "kind": "segmentation", "verdict": "match", "max_error": 1e-6,
         "error": "", "no_torch": "ok", "new_deps": []},
        {"model": "decoder", "source": "x-transformers", "kind": "llm", "verdict": "marked",
         "error": "x-transformers/x_transformers/x.py:12: torch.polar: no equivalent", "no_torch": "1/20 fail",
         "new_deps": ["skimage"]},
        {"model": "gone", "source": "someone/repo", "kind": "vit", "verdict": "source",
         "error": "source not available: get github:someone/repo at abc into /m/someone+repo/repo"},
    ]
    sources = {"monai": {"no_torch": "ok", "new_deps": []},
               "x-transformers": {"no_torch": "1/20 fail", "new_deps": ["skimage"],
                                  "first_import_error": "x_transformers.x: ImportError"},
               "someone/repo": {"no_torch": "", "new_deps": []}}
    research.print_table(rows, sources)
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("model"))
    assert header.split()[:5] == ["model", "source", "kind", "verdict", "max"]
    assert "1.00e-06" in out and "torch.polar: no equivalent" in out and "skimage" in out
    assert ("1 of 3 architectures (33%) from 3 repositories match torch after weight conversion; "
            "1 marked, 1 match, 1 source; 1 of 2 sources import without torch in every converted file; "
            "new requirements: skimage") in out
