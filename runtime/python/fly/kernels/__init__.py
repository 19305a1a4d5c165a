"""The Fly kernel library: functions on PyTorch tensors, each launching a
kernel of kernels/ (written in Fly) on PyTorch's current stream.

    import torch, fly.kernels
    y = fly.kernels.rms_norm(x, weight, eps=1e-6)

Specialisations built ahead of time by make are loaded from their bundles;
any other compiles on first use (libflyc, flyc's disk cache). Each is loaded
into the GPU once per process, so that calls after the first only launch,
and may be captured in a CUDA graph. docs/kernels.md describes every kernel.
"""
from __future__ import annotations

from ._library import kernel, library
from .attention import flash_attn, flash_attn_varlen, fused_rope_cache, paged_attention_decode
from .gemm import blockscale_mm, gemm, grouped_gemm, scaled_mm
from .moe import moe_align_block_size, topk_gating_softmax
from .moe_gemm import moe_gemm_2stage, moe_preshuffle_weights
from .norm import layer_norm, rms_norm, rms_norm_backward, softmax, softmax_backward
from .preshuffle import preshuffle_b, preshuffle_mm
from .quant import per_block_quant, per_token_quant

__all__ = ["rms_norm", "rms_norm_backward", "layer_norm", "softmax", "softmax_backward",
           "per_token_quant", "per_block_quant", "fused_rope_cache", "flash_attn",
           "flash_attn_varlen", "paged_attention_decode", "topk_gating_softmax",
           "moe_align_block_size", "gemm", "grouped_gemm", "scaled_mm", "blockscale_mm",
           "preshuffle_b", "preshuffle_mm", "moe_gemm_2stage", "moe_preshuffle_weights",
           "kernel", "library"]
