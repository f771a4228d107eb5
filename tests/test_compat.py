"""Each fallback of ``stridewidget/_compat.py``, reached by patching the private API away (the
torch installed here has them all, so nothing else ever runs these branches), and its answer
checked against what torch's public API says, or against the answer the docstring promises
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
