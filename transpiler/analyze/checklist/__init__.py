"""The training-tricks checklist: what the reference code does that the
migrated code must reproduce (network, optimizer, schedule, losses,
augmentation, initialisation, precision, EMA, clipping, accumulation, epochs,
batch size). One module per topic group, each with ``extract(facts)``; they are
found by walking this package."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from transpiler.analyze.facts import FileFacts
from transpiler.analyze.model import ChecklistItem

MAX_DETAIL = 160

# Display order of topics.
TOPICS = ("network", "optimizer", "lr schedule", "loss", "augmentation", "initialisation", "mixed precision",
          "EMA", "gradient clipping", "gradient accumulation", "epochs", "batch size")


@lru_cache(maxsize=1)
def extractors():
    import transpiler.analyze.checklist as package

    return tuple(
        importlib.import_module(f"{package.__name__}.{info.name}").extract
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name)
        if not info.name.startswith("_")
    )


def extract_checklist(facts: FileFacts) -> list[ChecklistItem]:
    items: list[ChecklistItem] = []
    for extract in extractors():
        items.extend(extract(facts))
    seen = set()
    unique = []
    for item in items:
        key = (item.topic, item.name, item.line)
        if key not in seen:
            seen.add(key)
            unique.append(item)
    unique.sort(key=lambda i: (TOPICS.index(i.topic) if i.topic in TOPICS else 99, i.line))
    return unique


def item(facts: FileFacts, topic: str, name: str, detail: str, line: int, limit: int = MAX_DETAIL) -> ChecklistItem:
    detail = " ".join(detail.split())
    if len(detail) > limit:
        detail = detail[: limit - 3] + "..."
    return ChecklistItem(topic, name, detail, facts.path, line)


def arguments_text(facts: FileFacts, call, skip_first: int = 0) -> str:
    """The call's arguments as written, minus the first ``skip_first`` positional ones (e.g. params)."""
    args = list(call.args)
    shown = []
    for index, arg in enumerate(args):
        if arg.keyword is None and not arg.star and index < skip_first:
            continue
        shown.append(facts.code(arg.value) if arg.keyword is None else f"{arg.keyword.value}={facts.code(arg.value)}")
    return ", ".join(shown)
