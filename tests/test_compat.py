"""Each fallback of the ``stridewidget/_compat/`` package, reached by patching the private API
away (the torch installed here has them all, so nothing else ever runs these branches), and its
answer checked against what torch's public API says, or against the answer the docstring promises
where torch has no public way to tell."""

from __future__ import annotations

import sys

import pytest
import torch
import torch.utils._python_dispatch as python_dispatch
import torch.utils._pytree as pytree

from stridewidget import _compat


def _gone(*_args, **_kwargs):
    raise AttributeError("patched away")


# --- wrapper subclasses, functorch ---------------------------------------------------------------


def test_wrapped_tensors_without_is_traceable_wrapper_subclass(monkeypatch):
    from torch.testing._internal.two_tensor import TwoTensor

    a, b = torch.zeros(2), torch.ones(2)
    wrapper = TwoTensor(a, b)
    monkeypatch.delattr(python_dispatch, "is_traceable_wrapper_subclass")
    inner = _compat.wrapped_tensors(wrapper)
    assert (
        inner is not None and inner[0] is wrapper.a and inner[1] is wrapper.b
    )  # its public fields
    assert _compat.wrapped_tensors(a) is None
    assert _compat.wrapped_tensors(a.as_subclass(type("Plain", (torch.Tensor,), {}))) is None


def test_functorch_without_torch_c_functorch(monkeypatch):
    seen = []

    def body(row):
        with monkeypatch.context() as patch:
            patch.delattr(torch._C, "_functorch")
            seen.append((_compat.functorch_unwrapped(row), _compat.functorch_transforms()))
        return row

    torch.func.vmap(body)(torch.zeros(3, 2))
    assert seen == [(None, ())]  # the fallback: nothing is wrapped, no transform is running


def test_functorch_stack_reader_with_and_without_torch_c_functorch(monkeypatch):
    seen = []

    def body(row):
        seen.append(bool(_compat.functorch_stack_reader()()))  # truthy: vmap runs
        with monkeypatch.context() as patch:
            patch.delattr(torch._C, "_functorch")
            reader = _compat.functorch_stack_reader()
            seen.append((reader is _compat.functorch_transforms, reader()))
        return row

    assert not _compat.functorch_stack_reader()()  # falsy outside any transform
    torch.func.vmap(body)(torch.zeros(3, 2))
    assert seen == [True, (True, ())]  # the fallback: functorch_transforms, saying none runs


def test_functional_mutation_count_without_the_counter(monkeypatch):
    monkeypatch.delattr(torch, "_functionalize_mutation_counter")
    assert _compat.functional_mutation_count(torch.zeros(2)) is None


# --- dispatch modes, schemas, storages, pytrees -------------------------------------------------


def test_dispatch_mode_base_without_it_says_what_is_missing(monkeypatch):
    monkeypatch.delattr(python_dispatch, "TorchDispatchMode")
    with pytest.raises(ImportError, match=r"TorchDispatchMode .*torch \S+ does not have"):
        _compat.dispatch_mode_base()


def test_op_schema_and_arguments_without_schema(monkeypatch):
    op = torch.ops.aten.add_.Tensor
    monkeypatch.delattr(op, "_schema")
    assert _compat.op_schema(op) is None
    assert _compat.op_arguments(op) == []  # no argument is known to be written


def test_overload_name_without_overloadname(monkeypatch):
    op = torch.ops.aten.bernoulli_.float
    monkeypatch.delattr(op, "_overloadname")
    assert _compat.overload_name(op) == op.name().partition(".")[2] == "float"
    default = torch.ops.aten.clone.default
    monkeypatch.delattr(default, "_overloadname")
    assert _compat.overload_name(default) == "default"


def test_storage_id_without_cdata(monkeypatch):
    x = torch.arange(6.0)
    monkeypatch.setattr(torch.UntypedStorage, "_cdata", property(_gone))
    storage = x.untyped_storage()
    assert _compat.storage_id(storage) == storage.data_ptr()
    assert _compat.storage_identity(x[2:]) == _compat.storage_identity(x)
    assert _compat.storage_identity(x.clone()) != _compat.storage_identity(x)
    # storages with no memory all sit at address 0: no identity is better than one shared by all
    meta = torch.empty(4, device="meta")
    with pytest.raises(RuntimeError, match="cannot be told apart"):
        _compat.storage_id(meta.untyped_storage())
    assert _compat.storage_identity(meta) is None


@pytest.mark.parametrize("value", [{"a": 1, "b": [2, (3,)]}, ((1, [2]), {"k": 3}), [], 5], ids=repr)
def test_pytrees_without_torch_utils_pytree(monkeypatch, value):
    leaves, _ = pytree.tree_flatten(value)  # before patching: what torch gives
    mapped = pytree.tree_map(lambda n: n * 10, value)
    for name in ("tree_flatten", "tree_map", "tree_leaves"):
        monkeypatch.delattr(pytree, name)
    assert _compat.tree_flatten(value)[0] == leaves
    assert _compat.tree_leaves(value) == leaves
    assert _compat.tree_map(lambda n: n * 10, value) == mapped


def test_tree_flatten_fallback_structure_tells_shapes_apart(monkeypatch):
    monkeypatch.delattr(pytree, "tree_flatten")
    assert _compat.tree_flatten([1, 2])[1] != _compat.tree_flatten((1, 2))[1]
    assert _compat.tree_flatten({"a": 1})[1] == _compat.tree_flatten({"a": 2})[1]


# --- symbolic shapes, compile, export -----------------------------------------------------------


def test_known_true_and_false_without_statically_known(monkeypatch):
    import torch.fx.experimental.symbolic_shapes as symbolic_shapes

    monkeypatch.delattr(symbolic_shapes, "statically_known_true")
    monkeypatch.delattr(symbolic_shapes, "statically_known_false")
    assert _compat.known_true(True) and _compat.known_false(False)  # plain bools still answer
    undecided = object()  # a SymBool: nothing symbolic is proven without them
    assert not _compat.known_true(undecided) and not _compat.known_false(undecided)


def test_fake_mode_of_without_the_fake_tensor_module(monkeypatch):
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode() as mode:
        fake = torch.empty(2)
    assert _compat.fake_mode_of(fake) is mode
    monkeypatch.delitem(sys.modules, "torch._subclasses.fake_tensor")
    assert _compat.fake_mode_of(fake) is None


def test_op_overload_class_without_torch_ops_module(monkeypatch):
    monkeypatch.delattr(torch, "_ops")
    assert _compat.op_overload_class() is type(None)
    assert not isinstance(torch.ops.aten.add.Tensor, _compat.op_overload_class())


def test_compiled_original_without_orig_mod(monkeypatch):
    model = torch.nn.Linear(2, 2)
    compiled = torch.compile(model)
    assert _compat.compiled_original(compiled) is model
    monkeypatch.delitem(sys.modules, "torch._dynamo.eval_frame")
    monkeypatch.delattr(compiled, "_torchdynamo_orig_callable")
    assert _compat.compiled_original(compiled) is None  # audited as the wrapper it is
    assert _compat.compiled_original(model) is None


def test_recording_backend_without_aot_autograd(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch._dynamo.backends.common", None)
    with pytest.raises(RuntimeError, match="aot_autograd"):
        _compat.recording_backend(lambda *args: None)


def test_user_output_window_without_tracing_context(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch._guards", None)
    assert _compat.compiled._user_output_window() is None
    assert _compat.compiled._mutated_inputs() is None


def test_mutated_inputs_outside_a_compile_is_unknown():
    assert _compat.compiled._mutated_inputs() is None  # no TracingContext: nothing to read


def test_export_user_error_without_dynamo_exc(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch._dynamo.exc", None)
    error = _compat.export_user_error()
    assert issubclass(error, Exception) and error.__name__ == "NeverRaised"
    assert not isinstance(ValueError("an export error"), error)  # it catches nothing real


# --- conj / neg views, print options ------------------------------------------------------------


def test_neg_view_without_torch_neg_view(monkeypatch):
    monkeypatch.delattr(torch, "_neg_view")
    assert _compat.neg_view(torch.tensor([1.0, 2.0])) is None


def test_print_options_without_print_opts(monkeypatch):
    torch.set_printoptions(profile="default")
    monkeypatch.delattr(torch._tensor_str, "PRINT_OPTS")
    assert _compat.torch_print_options() == (4, None)
    assert _compat.torch_summary_options() == (1000, 3)


def test_print_option_fallbacks_are_torchs_defaults():
    """The oracle for the fallbacks above: what ``print`` shows under the default profile."""
    torch.set_printoptions(profile="default")
    precision, _ = _compat.torch_print_options()
    threshold, edgeitems = _compat.torch_summary_options()
    assert f"{1 / 3:.{precision}f}" in str(torch.tensor([1 / 3]))
    assert "..." not in str(torch.arange(threshold)) and "..." in str(torch.arange(threshold + 1))
    head = str(torch.arange(threshold + 1)).split("...")[0]
    assert head.count(",") == edgeitems


# --- view bases and version counters ------------------------------------------------------------


def test_view_base_without_base(monkeypatch):
    x = torch.zeros(4)
    view = x[1:]
    monkeypatch.setattr(torch.Tensor, "_base", property(_gone))
    assert _compat.view_base(view) is None
    before = _compat.version_counter(view)
    x.add_(1)  # the fallback's promise: the view's own counter, shared with its base, moves
    assert _compat.version_counter(view) == before + 1


def test_version_counter_without_version(monkeypatch):
    monkeypatch.setattr(torch.Tensor, "_version", property(_gone))
    assert _compat.version_counter(torch.zeros(2)) is None


def test_version_counter_of_an_inference_tensor():
    with torch.inference_mode():
        t = torch.zeros(2)
    assert t.is_inference() and _compat.version_counter(t) is None


# --- functionalization, dispatch keys and kernels (the copy tracker) -----------------------------


def test_is_functional_tensor_without_torch_is_functional_tensor(monkeypatch):
    from torch.testing._internal.two_tensor import TwoTensor

    plain = [
        torch.zeros(2),
        torch.zeros(2, device="meta"),
        TwoTensor(torch.zeros(2), torch.ones(2)),
    ]

    def kinds(x):
        batched = []
        torch.func.vmap(lambda row: batched.append(_compat.is_functional_tensor(row)) or row)(
            torch.zeros(2, 2)
        )
        tensors = [x, x.clone(), *plain]
        return [_compat.is_functional_tensor(t) for t in tensors] + batched

    seen = []

    def body(x):
        seen.append(kinds(x))  # the oracle: torch's own answers
        with monkeypatch.context() as patch:  # functionalize itself needs it outside the body
            patch.delattr(torch, "_is_functional_tensor")
            seen.append(kinds(x))
        return x

    torch.func.functionalize(body)(torch.zeros(2))
    assert seen[1] == seen[0] == [True, True, False, False, False, False]


def test_op_returns_and_schema_name_without_schema(monkeypatch):
    view, compute = torch.ops.aten.transpose.int, torch.ops.aten.addmm.default
    names = [_compat.schema_name(view), _compat.schema_name(compute)]
    monkeypatch.delattr(view, "_schema")
    monkeypatch.delattr(compute, "_schema")
    assert [_compat.schema_name(view), _compat.schema_name(compute)] == names
    assert _compat.op_returns(view) == []  # no return known to be a view: searched for copies


def test_composite_implicit_key_without_dispatch_key(monkeypatch):
    key = torch._C.DispatchKey.CompositeImplicitAutograd
    monkeypatch.delattr(torch._C, "DispatchKey")
    name = _compat.composite_implicit_key()
    assert name == key.name  # the dispatcher takes the name as well as the key
    monkeypatch.undo()
    assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::reshape", name)


def test_has_kernel_without_the_dispatcher_query(monkeypatch):
    reshape = torch.ops.aten.reshape.default
    assert _compat.has_kernel(reshape, _compat.composite_implicit_key())
    monkeypatch.delattr(torch._C, "_dispatch_has_kernel_for_dispatch_key")
    assert not _compat.has_kernel(reshape, _compat.composite_implicit_key())  # none known


def test_run_composite_implicit_without_op_dk():
    import types

    reshape = torch.ops.aten.reshape.default
    # an op without the private _op_dk (torch's own decompose still has it to call)
    without = types.SimpleNamespace(decompose=reshape.decompose, name=reshape.name)
    x = torch.arange(6.0)
    result = _compat.run_composite_implicit(without, x, [2, 3])
    assert torch.equal(result, reshape(x, [2, 3]))  # the public op's answer
    assert result.data_ptr() == x.data_ptr()  # its decomposition: a view, as the kernel makes
    nothing = types.SimpleNamespace(decompose=lambda *a: NotImplemented, name=reshape.name)
    with pytest.raises(RuntimeError, match="no CompositeImplicitAutograd kernel"):
        _compat.run_composite_implicit(nothing, x, [2, 3])


def test_disable_current_modes_without_it_says_what_is_missing(monkeypatch):
    monkeypatch.delattr(python_dispatch, "_disable_current_modes")
    with pytest.raises(ImportError, match=r"_disable_current_modes .*torch \S+ does not have"):
        _compat.disable_current_modes()


def test_decomposition_table_without_torch_decomp(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch._decomp", None)
    assert _compat.decomposition_table() == {}  # no reference followed


def test_disable_torch_function_without_it_says_what_is_missing(monkeypatch):
    monkeypatch.delattr(torch._C, "DisableTorchFunction")
    with pytest.raises(RuntimeError, match="DisableTorchFunction"):
        _compat.disable_torch_function()


# --- profilers, autograd nodes (the audit's hidden copies) ---------------------------------------


def test_record_function_fast_without_it_records_the_same_event(monkeypatch):
    def names():
        with torch.profiler.profile() as prof, _compat.record_function_fast("sw.test:mark"):
            torch.zeros(2).clone()
        return [event.name for event in prof.events() if event.name == "sw.test:mark"]

    fast = names()
    monkeypatch.delattr(torch._C._profiler, "_RecordFunctionFast")
    assert names() == fast == ["sw.test:mark"]


def test_record_function_switch_without_it_raises_when_used(monkeypatch):
    monkeypatch.delattr(torch._C._autograd, "_enable_record_function")
    switch = _compat.record_function_switch()  # getting it is fine: the audit module imports it
    with pytest.raises(RuntimeError, match="_enable_record_function"):
        switch(True)


@pytest.mark.parametrize(
    "where, name",
    [
        ("autograd", "_enable_profiler_legacy"),
        ("autograd", "_disable_profiler_legacy"),
        ("profiler", "_ExperimentalConfig"),
    ],
)
def test_legacy_profiler_without_its_parts(monkeypatch, where, name):
    monkeypatch.delattr(torch.autograd if where == "autograd" else torch._C._profiler, name)
    assert not _compat.legacy_profiler_available()  # torch.profiler serves instead
    with pytest.raises(RuntimeError, match="no legacy autograd profiler"):
        if name == "_enable_profiler_legacy":
            _compat.enable_profiler_legacy(None)
        elif name == "_disable_profiler_legacy":
            _compat.disable_profiler_legacy()
        else:
            _compat.experimental_config()


def test_profiler_running_without_profiler_enabled(monkeypatch):
    assert not _compat.profiler_running()
    monkeypatch.delattr(torch.autograd, "_profiler_enabled")
    assert _compat.profiler_running()  # so torch.profiler is taken, which starts anywhere


def test_current_autograd_node_without_it(monkeypatch):
    x = torch.ones(2, requires_grad=True)
    seen = []
    x.register_hook(lambda grad: seen.append(_compat.current_autograd_node()))
    (x * 2).sum().backward()
    assert seen and seen[0] is not None  # torch's own answer inside backward
    monkeypatch.delattr(torch._C, "_current_autograd_node")
    seen.clear()
    (x * 2).sum().backward()
    assert seen == [None]  # unknown: copies are reported without their node


# --- module buffers, NumPy's solver -------------------------------------------------------------


def test_restore_buffer_without_the_buffer_dict(monkeypatch):
    norm = torch.nn.BatchNorm1d(2)
    saved = norm.running_mean
    norm.running_mean = torch.ones(2)
    _compat.restore_buffer(norm, "running_mean", saved)  # the private dict
    assert norm.running_mean is saved and dict(norm.named_buffers())["running_mean"] is saved
    norm.running_mean = torch.ones(2)
    monkeypatch.setattr(norm, "_buffers", None)  # gone: the public setattr
    _compat.restore_buffer(norm, "running_mean", saved)
    assert norm.running_mean is saved  # the documented promise


def test_own_tensors_without_the_module_dicts():
    import types

    module = torch.nn.BatchNorm1d(2)
    module.register_parameter("absent", None)  # a name registered as None: left out
    module.register_buffer("empty", None)
    public = (
        list(module.named_parameters(recurse=False, remove_duplicate=False)),
        list(module.named_buffers(recurse=False, remove_duplicate=False)),
    )
    assert _compat.own_tensors(module) == public  # the private dicts, read directly
    # a module-like object without them: the public iteration
    bare = types.SimpleNamespace(
        named_parameters=lambda **_: iter(public[0]), named_buffers=lambda **_: iter(public[1])
    )
    assert _compat.own_tensors(bare) == public


def test_diophantine_solver_without_numpys_test_module(monkeypatch):
    import numpy

    solve = _compat.diophantine_solver()
    assert solve is not None and solve((2, 3), (4, 4), 7) == (2, 1)  # 2*2 + 3*1 == 7
    a = numpy.zeros(8)
    assert solve((8, 8), (3, 3), 8) is not None and numpy.shares_memory(a[::2], a[1::3])
    monkeypatch.setitem(sys.modules, "numpy._core._multiarray_tests", None)
    monkeypatch.setitem(sys.modules, "numpy.core._multiarray_tests", None)
    assert _compat.diophantine_solver() is None  # the overlap search runs on its own solvers


def test_symbol_values_without_ranges_or_with_an_unbounded_one(monkeypatch):
    """Unbacked symbols take the fallback, raised to a known lower bound: a ShapeEnv without
    ``var_to_range``, or a range from ``-int_oo`` (which says ``is_finite`` yet has no int), must
    still give the fallback, not an AttributeError or OverflowError."""
    import types

    import sympy
    from torch.utils._sympy.numbers import int_oo

    from stridewidget._compat import symbols

    u0, u1, u2 = sympy.symbols("u0 u1 u2", integer=True)
    ranges = {u0: types.SimpleNamespace(lower=-int_oo), u1: types.SimpleNamespace(lower=5)}
    monkeypatch.setattr(symbols, "is_symbolic", lambda value: True)

    def sym(expr, **shape_env):
        return types.SimpleNamespace(
            node=types.SimpleNamespace(expr=expr, shape_env=types.SimpleNamespace(**shape_env))
        )

    value = sym(u0 + u1 + u2, backed_var_to_val={}, var_to_range=ranges)
    assert symbols.symbol_values(value, 2) == {"u0": 2, "u1": 5, "u2": 2}
    assert symbols.symbol_values(sym(u0 * u1, var_to_val={u1: 7}), 2) == {"u0": 2, "u1": 7}


def test_simplified_text_with_and_without_the_shape_env_s_simplify(monkeypatch):
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    env = ShapeEnv()
    u0, u1 = env.create_unbacked_symint(), env.create_unbacked_symint()
    value = u0 * (u1 - 1) + u0  # sympy keeps it unexpanded
    names = sorted(str(s) for s in value.node.expr.free_symbols)
    assert str(value.node.expr) != f"{names[0]}*{names[1]}"
    assert _compat.simplified_text(value) == f"{names[0]}*{names[1]}"
    monkeypatch.delattr(ShapeEnv, "simplify")  # gone: sympy's expand says the same
    assert _compat.simplified_text(value) == f"{names[0]}*{names[1]}"

    def fails(self, expr):
        raise RuntimeError("cannot")

    monkeypatch.setattr(ShapeEnv, "simplify", fails, raising=False)
    assert _compat.simplified_text(value) == str(value.node.expr)  # the expression as it is


def test_compiled_dynamic_without_the_context(monkeypatch):
    model = torch.nn.Linear(2, 2)
    compiled = torch.compile(model, dynamic=True)
    assert _compat.compiled_dynamic(compiled) is True
    assert _compat.compiled_dynamic(torch.compile(model)) is None  # torch's default
    monkeypatch.delattr(type(compiled.dynamo_ctx), "_dynamic", raising=False)
    monkeypatch.delattr(compiled.dynamo_ctx, "_dynamic")
    assert _compat.compiled_dynamic(compiled) is None  # captured static, as torch starts
    assert _compat.compiled_dynamic(lambda x: x) is None


# --- compiled functions run under a dispatch mode; sparse tensors' data ---------------------


def _mode_skipped_call():
    """A compiled function called under a dispatch mode (dynamo skips it) inside the block."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Passing(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    # a new code object each call: dynamo marks a code it skipped, for good when not reset
    compiled = torch.compile(eval("lambda t: t * 2"), backend="eager")
    with _compat.mode_skipped_compiles() as skipped, Passing():
        compiled(torch.ones(2))
    return skipped


def test_mode_skipped_compiles_sees_the_skipped_function():
    skipped = _mode_skipped_call()
    assert skipped and skipped[0].startswith("<lambda> (")  # torch's own answer: it was skipped


def test_mode_skipped_compiles_without_dynamo_tls(monkeypatch):
    import types

    monkeypatch.setitem(sys.modules, "torch._dynamo.eval_frame", types.ModuleType("moved"))
    assert _mode_skipped_call() == []  # the fallback: nothing seen, nothing reset


def test_mode_skipped_compiles_without_reset_code(monkeypatch):
    import torch._C._dynamo.eval_frame as c_eval_frame
    import torch._dynamo  # noqa: F401  (imported before the patch: dynamo imports reset_code)

    monkeypatch.delattr(c_eval_frame, "reset_code")
    assert _mode_skipped_call()  # still seen; the codes stay skipped


def test_sparse_parts_without_private_indices(monkeypatch):
    sparse = torch.eye(3).to_sparse()  # coalesced: its indices() and values() are the same data
    found = sum(p.nbytes for p in _compat.sparse_parts(sparse))
    monkeypatch.setattr(torch.Tensor, "_indices", property(_gone))
    assert sum(p.nbytes for p in _compat.sparse_parts(sparse)) == found
    assert found == sparse.indices().nbytes + sparse.values().nbytes


def test_stored_tensor_attributes_without_the_private_ones(monkeypatch):
    assert _compat.stored_tensor_attributes() == {
        torch.Tensor.grad,
        torch.Tensor._grad,
        torch.Tensor._base,
    }

    class Tensor:  # a torch whose Tensor has the public grad only
        grad = torch.Tensor.grad

    monkeypatch.setitem(sys.modules, "torch", type(sys)("torch"))
    sys.modules["torch"].Tensor = Tensor
    assert _compat.stored_tensor_attributes() == {torch.Tensor.grad}  # the public one only
