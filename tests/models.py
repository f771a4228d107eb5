"""The one home of the model builders the audit and sanitizer tests share: small configs of
real models (torchvision, timm, transformers, diffusers) and a few plain modules.

A builder returns ``(model, inputs)``, the positional inputs as a tuple; the language models of
the audit zoo, fed keyword inputs, return ``(model, (), kwargs)`` (see :func:`tokens`).  Each
builds its model and draws its inputs in one fixed order, so a test that seeds torch first gets
the same weights and inputs every run.
"""

from __future__ import annotations

import sys
import types

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

# The data-moving ATen ops (the list; the backward of a view moves the gradient into a
# zero buffer): each element of the output is an input element or a constant (a gather, a
# select with a mask: ``where``, ``masked_fill``, ``triu``).  Ops that compute are not here.
MOVES = {
    "clone",
    "copy_",
    "_to_copy",
    "contiguous",
    "cat",
    "stack",
    "index",
    "index_select",
    "gather",
    "take",
    "masked_select",
    "repeat",
    "repeat_interleave",
    "flip",
    "roll",
    "pad",
    "constant_pad_nd",
    "reflection_pad1d",
    "reflection_pad2d",
    "replication_pad2d",
    "where",
    "masked_fill",
    "index_put_",
    "_index_put_impl_",
    "scatter",
    "slice_scatter",
    "select_scatter",
    "narrow_copy",
    "pixel_shuffle",
    "im2col",
    "upsample_nearest1d",  # a gather of the nearest values
    "upsample_nearest2d",
    "upsample_nearest3d",
    "_upsample_nearest_exact1d",  # the same gather, rounding its source index to the nearest
    "_upsample_nearest_exact2d",
    "_upsample_nearest_exact3d",
    "slice_backward",
    "select_backward",
    "diagonal_backward",
    # a select with a constant, or a gather into a new buffer: the tracker's reference
    # decompositions say so (``where`` of a mask, ``index_copy``'s clone; torch.complex
    # interleaves its two inputs; channel_shuffle and pixel_unshuffle are permutes made
    # contiguous)
    "triu",
    "tril",
    "diag_embed",
    "block_diag",
    "index_copy",
    "complex",
    "channel_shuffle",
    "native_channel_shuffle",
    "pixel_unshuffle",
}


#: Data moves that are most often a mask an op builds inside itself from constants (SDPA's math
#: kernel: ``ones(L, S).tril()``): the zoo's oracle leaves those out (``_masks_made_inside``).
MASKS = {"triu", "tril"}


def outermost_moves(events) -> list:
    """The profiler's events of data-moving ATen ops (:data:`MOVES`) not inside another one."""
    found = []
    for event in events:
        if event.name.removeprefix("aten::") not in MOVES:
            continue
        parent = event.cpu_parent
        while parent is not None and parent.name.removeprefix("aten::") not in MOVES:
            parent = parent.cpu_parent
        if parent is None:
            found.append(event)
    return found


def import_torchvision() -> types.ModuleType:
    """torchvision's models are pure Python, but PyPI's Linux wheel is built against CUDA torch:
    with the CPU torch the project installs, its compiled ops do not load and its import fails
    while registering fake kernels for them.  The tests need no torchvision op, so those two
    registration modules are skipped."""
    for name in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
        sys.modules.setdefault(name, types.ModuleType(name))
    import torchvision

    return torchvision


# --- (model, inputs) ----------------------------------------------------------------------------


def resnet18() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    return import_torchvision().models.resnet18(weights=None), (torch.randn(2, 3, 32, 32),)


def mobilenet_v3_small() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    model = import_torchvision().models.mobilenet_v3_small(weights=None)
    return model, (torch.randn(2, 3, 32, 32),)


def efficientnet_b0() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    return import_torchvision().models.efficientnet_b0(weights=None), (torch.randn(2, 3, 32, 32),)


def vit() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    model = import_torchvision().models.VisionTransformer(
        image_size=32, patch_size=16, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64
    )
    return model, (torch.randn(2, 3, 32, 32),)


def timm_model(name: str, **config) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    import_torchvision()
    timm = pytest.importorskip("timm")
    return timm.create_model(name, pretrained=False, **config), (torch.randn(2, 3, 32, 32),)


def bert() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    import_torchvision()  # transformers imports torchvision when it is installed
    import transformers

    config = transformers.BertConfig(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=16,
    )
    return transformers.BertModel(config), (torch.randint(0, 50, (2, 12)),)


def gpt2() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    """GPT-2's body (no LM head), fed token ids."""
    import_torchvision()  # transformers imports torchvision when it is installed
    import transformers

    config = transformers.GPT2Config(
        vocab_size=50,
        n_embd=32,
        n_layer=2,
        n_head=4,
        n_positions=16,
        bos_token_id=0,
        eos_token_id=0,
    )
    return transformers.GPT2Model(config), (torch.randint(0, 50, (2, 12)),)


def transposed_batch_layer() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0)  # batch_first=False
    return layer, (torch.randn(2, 6, 16).transpose(0, 1),)  # (batch, seq) made (seq, batch)


def unet() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    import_torchvision()
    diffusers = pytest.importorskip("diffusers")
    model = diffusers.UNet2DModel(
        sample_size=16,
        in_channels=3,
        out_channels=3,
        layers_per_block=1,
        block_out_channels=(16, 32),
        down_block_types=("DownBlock2D", "AttnDownBlock2D"),
        up_block_types=("AttnUpBlock2D", "UpBlock2D"),
        norm_num_groups=8,
        attention_head_dim=8,
    )
    return model, (torch.randn(2, 3, 16, 16), torch.tensor([10, 20]))


# --- causal / seq2seq language models: (model, (), kwargs) -------------------------------------


def tokens() -> dict[str, torch.Tensor]:
    """Keyword inputs of a language model that computes its own loss: ids that are the labels."""
    ids = torch.randint(0, 64, (2, 8))
    return {"input_ids": ids, "labels": ids}


def gpt2_lm() -> tuple[torch.nn.Module, tuple, dict[str, torch.Tensor]]:
    import_torchvision()
    import transformers

    config = transformers.GPT2Config(
        vocab_size=64,
        n_positions=16,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=0,
        eos_token_id=0,
    )
    return transformers.GPT2LMHeadModel(config), (), tokens()


def llama() -> tuple[torch.nn.Module, tuple, dict[str, torch.Tensor]]:
    import_torchvision()
    import transformers

    config = transformers.LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=16,
    )
    return transformers.LlamaForCausalLM(config), (), tokens()


def t5() -> tuple[torch.nn.Module, tuple, dict[str, torch.Tensor]]:
    import_torchvision()
    import transformers

    config = transformers.T5Config(
        vocab_size=64,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_heads=4,
        decoder_start_token_id=0,
        pad_token_id=0,
    )
    return transformers.T5ForConditionalGeneration(config), (), tokens()


def profiled_op_list(step) -> list[str]:
    """The ATen ops a ``torch.profiler`` saw, in order; an op inside an op of the same name (a
    dispatch mode running the op it was handed) once."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    names = []
    for event in sorted(prof.events(), key=lambda e: e.time_range.start):
        parent = event.cpu_parent
        while parent is not None and parent.name != event.name:
            parent = parent.cpu_parent
        if event.name.startswith("aten::") and parent is None:
            names.append(event.name)
    return names
