"""Every private torch / NumPy API the package uses, one small function per use, by subject.

Each function names the torch (or NumPy) version it was checked on and says what its fallback
does when the private name is gone: a public route where there is one, else a clear error or a
documented degraded answer, so a torch upgrade breaks one function here, not a picture.  Every
function takes what it needs from ``sys.modules`` or a lazy import, so importing this package
never imports torch.  The rest of the package imports them from here: ``from .._compat import x``.
"""

from __future__ import annotations

from .compiled import (
    compiled_backend,
    compiled_dynamic,
    compiled_in_place,
    compiled_original,
    export_user_error,
    mode_skipped_compiles,
    recording_backend,
)
from .dispatch import (
    composite_implicit_key,
    decomposition_table,
    disable_current_modes,
    disable_torch_function,
    dispatch_mode_base,
    has_kernel,
    interception_modes_on,
    op_arguments,
    op_overload_class,
    op_returns,
    op_runner,
    op_schema,
    overload_name,
    run_composite_implicit,
    schema_name,
    stored_tensor_attributes,
)
from .distributed import (
    fsdp_parameter_pairs,
    local_tensors_by_rank,
    shard_positions,
    strided_split_factor,
)
from .eval_frame import dispatch_unwrapped
from .higher_order import is_higher_order, run_higher_order
from .numpy import diophantine_solver
from .printing import torch_print_options, torch_summary_options
from .profiler import (
    current_autograd_node,
    disable_profiler_legacy,
    enable_profiler_legacy,
    experimental_config,
    legacy_profiler_available,
    post_accumulate_grad_hooked,
    profiler_running,
    record_function_fast,
    record_function_switch,
)
from .pytree import tree_flatten, tree_leaves, tree_map
from .storage import (
    neg_view,
    own_tensors,
    restore_buffer,
    restore_parameter,
    set_version_counter,
    sparse_parts,
    storage_id,
    storage_id_reader,
    storage_identity,
    version_counter,
    view_base,
)
from .symbols import (
    fake_mode_of,
    is_fake_tensor,
    is_symbolic,
    known_false,
    known_true,
    simplified_text,
    symbol_example,
    symbol_names,
    symbol_values,
)
from .wrappers import (
    functional_mutation_count,
    functorch_stack_reader,
    functorch_transforms,
    functorch_unwrapped,
    is_functional_tensor,
    wrapped_tensors,
)

__all__ = [
    "compiled_backend",
    "compiled_dynamic",
    "compiled_in_place",
    "compiled_original",
    "composite_implicit_key",
    "current_autograd_node",
    "decomposition_table",
    "diophantine_solver",
    "disable_current_modes",
    "disable_profiler_legacy",
    "disable_torch_function",
    "dispatch_mode_base",
    "dispatch_unwrapped",
    "enable_profiler_legacy",
    "experimental_config",
    "export_user_error",
    "fake_mode_of",
    "fsdp_parameter_pairs",
    "functional_mutation_count",
    "functorch_stack_reader",
    "functorch_transforms",
    "functorch_unwrapped",
    "has_kernel",
    "interception_modes_on",
    "is_fake_tensor",
    "is_functional_tensor",
    "is_higher_order",
    "is_symbolic",
    "known_false",
    "known_true",
    "legacy_profiler_available",
    "local_tensors_by_rank",
    "mode_skipped_compiles",
    "neg_view",
    "op_arguments",
    "op_overload_class",
    "op_returns",
    "op_runner",
    "op_schema",
    "overload_name",
    "own_tensors",
    "post_accumulate_grad_hooked",
    "profiler_running",
    "record_function_fast",
    "record_function_switch",
    "recording_backend",
    "restore_buffer",
    "restore_parameter",
    "run_composite_implicit",
    "run_higher_order",
    "schema_name",
    "set_version_counter",
    "shard_positions",
    "simplified_text",
    "sparse_parts",
    "storage_id",
    "storage_id_reader",
    "storage_identity",
    "stored_tensor_attributes",
    "strided_split_factor",
    "symbol_example",
    "symbol_names",
    "symbol_values",
    "torch_print_options",
    "torch_summary_options",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "version_counter",
    "view_base",
    "wrapped_tensors",
]
