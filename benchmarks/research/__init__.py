"""The research benchmark's corpus (spec.py: what a source and a model are;
corpus_pypi.py and corpus_github.py: the entries) and the pieces that run it
(fetch.py, torch_side.py, mindspore_side.py, imports.py); benchmarks/research.py
is the command."""

from __future__ import annotations

import importlib

from benchmarks.research.spec import Model, Source

CORPUS_MODULES = ("benchmarks.research.corpus_pypi", "benchmarks.research.corpus_github")


def corpus() -> tuple[list[Source], list[Model]]:
    """Every source and model of the corpus modules that exist."""
    sources: list[Source] = []
    models: list[Model] = []
    for name in CORPUS_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        sources.extend(getattr(module, "SOURCES", []))
        models.extend(getattr(module, "MODELS", []))
    return sources, models


def model_by_id(model_id: str) -> Model:
    for model in corpus()[1]:
        if model.id == model_id:
            return model
    raise KeyError(f"no model {model_id!r} in the research corpus")


def safe_name(source_name: str) -> str:
    """A directory name for a source (``owner/repo`` -> ``owner+repo``, as the fetch tool names it)."""
    return source_name.replace("/", "+")
