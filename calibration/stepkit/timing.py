"""Timing one piece of work: on a GPU as a captured CUDA graph replayed between L2 flushes, timed by events,
median of several replays; on the CPU (smoke tests only) by the wall clock."""

import math
import statistics
import time

import torch

TARGET_MS = 30.0  # timed replays per piece: enough to fill about this long
MIN_REPS, MAX_REPS = 5, 25
FLUSH_BYTES = 256 << 20  # > 4x the H200's 60 MB L2


class Timer:
    """`timer(fn)` returns fn's median time in ms. On CUDA, fn runs once eagerly on a side stream (Triton
    compiles, cuBLAS picks its algorithms), is captured into a graph, and the graph is replayed; before each
    timed replay a read of a large buffer evicts the L2, so no piece finds its weights or KV cached from the
    previous replay (in a real step the other layers have evicted them)."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"
        if self.cuda:
            self.flush = torch.ones(FLUSH_BYTES // 4, device=device, dtype=torch.float32)
            self.stream = torch.cuda.Stream(device)

    def __call__(self, fn):
        return self._cuda(fn) if self.cuda else self._cpu(fn)

    def _cpu(self, fn):
        fn()
        times = []
        for _ in range(3):
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)

    def _cuda(self, fn):
        current = torch.cuda.current_stream()
        self.stream.wait_stream(current)
        with torch.cuda.stream(self.stream):
            fn()
        current.wait_stream(self.stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        graph.replay()
        first = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
        first[0].record()
        graph.replay()
        first[1].record()
        torch.cuda.synchronize()
        estimate = max(first[0].elapsed_time(first[1]), 1e-3)
        reps = min(MAX_REPS, max(MIN_REPS, math.ceil(TARGET_MS / estimate)))
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
        for start, end in pairs:
            self.flush.max()
            start.record()
            graph.replay()
            end.record()
        torch.cuda.synchronize()
        del graph
        return statistics.median(start.elapsed_time(end) for start, end in pairs)


def ceilings(device, timer):
    """The two ceilings of METHOD.md, after a second of matrix work so the clocks have risen: a device copy
    (TB/s counting read and write) and an 8192³ bf16 matmul (TFLOP/s)."""
    x, y = (torch.randn(8192, 8192, device=device, dtype=torch.bfloat16) for _ in range(2))
    for _ in range(700):
        x @ y
    matmul = 2 * 8192**3 / timer(lambda: x @ y) / 1e9
    del x, y
    a = torch.randn(2 << 30, device=device, dtype=torch.bfloat16)  # 4 GiB: 8.6 GB moved, as KINDS.md measured
    b = torch.empty_like(a)
    copy = 2 * a.numel() * 2 / timer(lambda: b.copy_(a)) / 1e9
    return copy, matmul
