"""A call in compiled code into a library graph mode cannot call is marked with why, and
with the setting that makes it run the call as Python.

Graph mode (GRAPH_MODE, ``mindspore.jit``, ``mindspore.export``) runs a library's
functions as Python only for the libraries MindSpore lists (its JIT fallback's
third-party list: numpy, scipy and some 160 more, and the standard library); those of any
other installed library it parses and compiles as if they were the model's own code.
vector-quantize-pytorch (MIT) logs from its k-means initialisation, which its forward
reaches::

    logger.warning(f'k-means init received {num_samples} vectors ...')

with ``from loguru import logger``. Compiled, loguru's ``Logger.warning(__self,
__message, *args, **kwargs)`` fails to bind ("For function:warning, its max argument
size: 1 is less than parameter size: 2", measured on MindSpore 2.10 CPU); with
``MS_JIT_IGNORE_MODULES=loguru`` in the environment graph mode runs the call as Python
and compiles past it. The code stays as written; the comment above the line says so.

The libraries here are those measured to fail; a library graph mode compiles is left
alone.
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from transpiler.convert.structural.compiled_functions import InCompiledFunctions, with_comment
from transpiler.convert.walk import rewrite

# library -> what graph mode fails on, measured
UNCALLABLE = {"loguru": "its logger's methods"}


def comment(library: str) -> str:
    return (f"# graph mode compiles {library} as if it were this model's code and cannot call {UNCALLABLE[library]}: "
            f"MS_JIT_IGNORE_MODULES={library} in the environment has it run the call as Python")


def with_library_calls_marked(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    names = _library_names(module)
    if not names:
        return module
    return rewrite(module, _Marks(names, compiled, to_format))


def _library_names(module: cst.Module) -> dict[str, str]:
    """Names the file's top-level imports bind to the listed libraries -> the library."""
    names = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and small.module is not None \
                    and not isinstance(small.names, cst.ImportStar):
                library = get_full_name_for_node(small.module).split(".")[0]
                if library in UNCALLABLE:
                    names.update({alias.evaluated_alias or alias.evaluated_name: library for alias in small.names})
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    library = alias.evaluated_name.split(".")[0]
                    if library in UNCALLABLE:
                        names[alias.evaluated_alias or library] = library
    return names


class _Marks(InCompiledFunctions):
    def __init__(self, names: dict[str, str], compiled: set[str], to_format):
        super().__init__(compiled, to_format)
        self.names = names
        self.found: list[str | None] = [None]

    def visit_SimpleStatementLine(self, node) -> None:
        self.found.append(None)

    def visit_Call(self, node: cst.Call) -> None:
        if self.depth and self.found[-1] is None:
            root = node.func
            while isinstance(root, cst.Attribute):
                root = root.value
            if isinstance(root, cst.Name) and root.value in self.names:
                self.found[-1] = self.names[root.value]

    def leave_SimpleStatementLine(self, original_node, updated_node):
        library = self.found.pop()
        return updated_node if library is None else with_comment(updated_node, comment(library))
