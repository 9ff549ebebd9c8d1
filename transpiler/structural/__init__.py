"""Structural transforms: rewrites that change program structure rather than
one call (Module -> Cell, forward -> construct, grad-mode contexts, buffers,
statements made empty by device moves). Each lives in its own module."""

from transpiler.structural.attributes import Attributes
from transpiler.structural.asserts import as_assert, is_torch_assert
from transpiler.structural.buffers import convert_buffer_registration
from transpiler.structural.checkpoints import Checkpoints
from transpiler.structural.datasets import convert_dataset_class, record_dataset_columns, visit_dataset_class
from transpiler.structural.cells import (
    convert_function,
    drop_no_op_decorators,
    is_module_base,
    is_self_or_super,
    run_assigned_children,
)
from transpiler.structural.devices import device_reads_used_as_strings, is_noop_statement, record_known_kinds
from transpiler.structural.in_place import assign_in_place, in_place_value
from transpiler.structural.keyword_dicts import expand_keyword_dicts
from transpiler.structural.grad_mode import grad_context_reference, is_grad_context, unwrap_grad_context
from transpiler.structural.references import reference_ids
from transpiler.structural.surroundings import Surroundings
from transpiler.structural.training_loop import TrainingLoops

__all__ = [
    "as_assert",
    "is_torch_assert",
    "assign_in_place",
    "Attributes",
    "in_place_value",
    "Checkpoints",
    "convert_buffer_registration",
    "convert_dataset_class",
    "record_dataset_columns",
    "visit_dataset_class",
    "convert_function",
    "device_reads_used_as_strings",
    "expand_keyword_dicts",
    "drop_no_op_decorators",
    "grad_context_reference",
    "is_grad_context",
    "is_module_base",
    "is_noop_statement",
    "is_self_or_super",
    "record_known_kinds",
    "Surroundings",
    "TrainingLoops",
    "reference_ids",
    "run_assigned_children",
    "unwrap_grad_context",
]
