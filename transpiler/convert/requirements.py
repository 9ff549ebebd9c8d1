"""What a converted file needs that its original did not: third-party packages.

A converted program should need nothing its user did not have: MindSpore and
what MindSpore itself requires (NumPy, Pillow, SciPy, protobuf, ...). Where a
conversion still writes an import of another package, the package is a new
requirement: the output says so in a comment on the import line
(``import_comment``) and the report lists it (``new_third_party_imports``
compares the top-level imports of the two sources).

    >>> new_third_party_imports("import torch\\nfrom torch.utils.tensorboard import SummaryWriter\\n",
    ...                         "import mindspore\\nimport tensorboardX\\n")
    ['tensorboardX']
"""

from __future__ import annotations

import ast
import sys
from functools import lru_cache

# import names that come with mindspore 2.10 (its Requires-Dist, followed), for
# machines where mindspore is not installed next to the converter
_MINDSPORE_2_10 = frozenset({"mindspore", "numpy", "PIL", "scipy", "google", "asttokens", "astunparse",
                             "packaging", "psutil", "safetensors", "dill", "six", "wheel"})

# the packages a conversion may write imports of that the user of the torch
# API did not need (measured: see rewrite_rules/training/tensorboard.py), and why
NEW_REQUIREMENTS = {
    # torch's SummaryWriter is a port of tensorboardX: the same API and event files; pure Python, and what it
    # requires (numpy, packaging, protobuf) comes with tensorboard and mindspore
    "tensorboardX": "torch.utils.tensorboard's SummaryWriter as a package of its own",
}


# the rule name of the diagnostic that names a new requirement (one per import line the conversion writes)
NEW_REQUIREMENT = "new-requirement"


def requirement_of(module: str) -> str:
    """The package an import of ``module`` needs (its top-level name)."""
    return module.split(".")[0]


def import_comment(module: str) -> str | None:
    """The comment for an import of ``module`` the conversion writes, when it is a new requirement."""
    top = requirement_of(module)
    reason = NEW_REQUIREMENTS.get(top)
    return None if reason is None else f"# new requirement: pip install {top} ({reason})"


def top_level_imports(source: str) -> set[str]:
    """Top-level names of the absolute imports anywhere in ``source`` (none if it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@lru_cache(maxsize=None)
def mindspore_provides() -> frozenset[str]:
    """Import names available wherever mindspore is installed: mindspore and
    the packages it requires (read from the installed metadata when there is
    one, else mindspore 2.10's list)."""
    from importlib import metadata

    try:
        metadata.distribution("mindspore")
    except metadata.PackageNotFoundError:
        return _MINDSPORE_2_10
    distributions, todo = {"mindspore"}, ["mindspore"]
    while todo:
        try:
            requires = metadata.requires(todo.pop()) or []
        except metadata.PackageNotFoundError:
            continue
        for requirement in requires:
            if "extra ==" in requirement:
                continue
            name = requirement.split(";")[0].strip()
            for stop in "<>=!~[( ":
                name = name.split(stop)[0]
            name = name.lower().replace("_", "-")
            if name and name not in distributions:
                distributions.add(name)
                todo.append(name)
    names = {"mindspore"}
    for module, owners in metadata.packages_distributions().items():
        if any(owner.lower().replace("_", "-") in distributions for owner in owners):
            names.add(module)
    return frozenset(names | (_MINDSPORE_2_10 & {"PIL", "numpy", "google"}))


def new_third_party_imports(original: str, converted: str, first_party=()) -> list[str]:
    """The top-level third-party packages ``converted`` imports and ``original``
    does not: not the standard library, not ``first_party`` (the project's own
    modules), not mindspore nor what mindspore requires. Sorted."""
    ignored = set(sys.stdlib_module_names) | set(first_party) | mindspore_provides() | {"__future__"}
    return sorted(top_level_imports(converted) - top_level_imports(original) - ignored)
