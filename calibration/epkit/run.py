"""The timed exchange: one process per GPU (or per CPU rank under gloo), each sending its tokens' copies to the
GPUs that hold their experts (dispatch) and taking them back (combine), through
torch.distributed.all_to_all_single — NCCL on GPUs."""

import json
import statistics
import time

import torch
import torch.distributed as dist

from epkit import plan

DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


class Timer:
    """`timer(fn)`: (first, last) — per repeat the shortest and the longest of the processes' times of `fn`,
    each a median over repeats, in ms.

    Processes leave the barrier a few µs apart, and a collective ends for all at about the same time, so the
    process that started last waited for no one: the shortest time is the exchange's own, the longest adds
    the processes' start skew."""

    def __init__(self, device, warmup, repeats):
        self.device, self.warmup, self.repeats = device, warmup, repeats
        self.cuda = device.type == "cuda"

    def __call__(self, fn):
        for _ in range(self.warmup):
            fn()
        times = []
        for _ in range(self.repeats):
            # Every process starts the collective together, so one process's late start is not timed as
            # another's wait.
            dist.barrier()
            if self.cuda:
                torch.cuda.synchronize(self.device)
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end))
            else:
                began = time.perf_counter()
                fn()
                times.append((time.perf_counter() - began) * 1e3)
        spread = []
        for op in (dist.ReduceOp.MIN, dist.ReduceOp.MAX):
            per_repeat = torch.tensor(times, dtype=torch.float64, device=self.device)
            dist.all_reduce(per_repeat, op=op)
            spread.append(statistics.median(per_repeat.tolist()))
        return tuple(spread)


def exchange(rank, counts, hidden, dtype, device, timer):
    """Times one layer's exchange for routing `counts`; checks that dispatch then combine gives every process
    its tokens back. Returns the times `plan.row` takes."""
    n = len(counts)
    send_splits = counts[rank]
    recv_splits = [counts[s][rank] for s in range(n)]
    sent = torch.randn(sum(send_splits), hidden, device=device).to(dtype)
    received = torch.empty(sum(recv_splits), hidden, device=device, dtype=dtype)
    back = torch.empty_like(sent)
    split_counts = torch.tensor(send_splits, dtype=torch.int64, device=device)
    got_counts = torch.empty_like(split_counts)

    def dispatch():
        dist.all_to_all_single(received, sent, output_split_sizes=recv_splits, input_split_sizes=send_splits)

    def combine():
        dist.all_to_all_single(back, received, output_split_sizes=send_splits, input_split_sizes=recv_splits)

    dispatch()
    combine()
    dist.all_to_all_single(got_counts, split_counts)
    if got_counts.tolist() != recv_splits or not torch.equal(back, sent):
        raise RuntimeError(f"rank {rank}: the exchange did not return the tokens it sent")
    times = {"counts_ms": timer(lambda: dist.all_to_all_single(got_counts, split_counts))[0]}
    times["dispatch_ms"], times["dispatch_max_ms"] = timer(dispatch)
    times["combine_ms"], times["combine_max_ms"] = timer(combine)
    return times


def worker(rank, gpus, job, out_path):
    """One process of an N-process run: every model and token count of `job`; rank 0 writes the rows as JSON
    to `out_path`."""
    cuda = job["device"] == "cuda"
    device = torch.device("cuda", rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    options = {"device_id": device} if cuda else {}
    dist.init_process_group(job["backend"], rank=rank, world_size=gpus, **options)
    try:
        timer = Timer(device, job["warmup"], job["repeats"])
        rows = []
        for model in (plan.MoeShape(**m) for m in job["models"]):
            for tokens in job["tokens"]:
                counts = plan.route(model, tokens, gpus)
                times = exchange(rank, counts, model.hidden, DTYPES[job["dtype"]], device, timer)
                rows.append(plan.row(job["hardware"], model, tokens, job["dtype"], counts, times, job["repeats"]))
                if rank == 0:
                    print(f"  N {gpus} {model.key:22s} {tokens:4d} tokens/GPU: dispatch {times['dispatch_ms']:.4f} "
                          f"ms, combine {times['combine_ms']:.4f} ms", flush=True)
        if rank == 0:
            with open(out_path, "w", encoding="utf-8") as f:
                json.dump(rows, f)
    finally:
        dist.destroy_process_group()
