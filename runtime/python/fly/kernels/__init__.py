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
from .norm import rms_norm
from .moe import moe_align_block_size, topk_gating_softmax

__all__ = ["rms_norm", "kernel", "library"]
__all__ += ["topk_gating_softmax", "moe_align_block_size"]
