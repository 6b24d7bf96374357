"""From measured pieces to the step-time CSV `alsim calibrate` reads (no torch here: testable anywhere).

A piece is timed for the few layers built of each layer type; the whole model's step is assembled by layer
count:  verify = Σ_types count · layer + head,  step = verify + k · draft_forward  (k = w − 1 chain drafts of
one token per sequence). Part columns are scaled the same way, so each is the whole model's share of that part.
"""

import csv

COLUMNS = [
    "hardware", "model", "drafter", "precision", "tp", "concurrency", "k", "al", "context",
    "step_ms", "verify_ms", "drafter_ms", "dense_ms", "experts_ms", "attention_ms", "lm_head_ms",
    "draft_forward_ms", "experts_touched", "moe_impl", "attention_impl",
]

LAYER_COLUMNS = [
    "context", "concurrency", "w", "layer_type", "count", "built", "layer_ms", "dense_ms", "attention_ms",
    "experts_loop_ms", "experts_grouped_ms", "experts_touched", "attention_triton_ms", "attention_sdpa_ms",
    "attention_matmul_ms",
]


def step_row(shape, hardware, drafter, point, draft_forward_ms):
    """One CSV row (a dict over COLUMNS) for a measured grid point.

    `point`: {"batch", "width", "context", "head_ms", "lm_head_ms", "types": {name: {"layer_ms", "dense_ms",
    "attention_ms", "experts_ms", "touched", "impl"}}} with per-layer times of each type.
    """
    k = point["width"] - 1
    counts = {t.name: t.count for t in shape.types}

    def total(part):
        return sum(counts[name] * piece.get(part, 0.0) for name, piece in point["types"].items())

    verify = total("layer_ms") + point["head_ms"]
    drafts = k * draft_forward_ms if drafter else 0.0
    moe = [p for p in point["types"].values() if p.get("touched") is not None]
    return {
        "hardware": hardware,
        "model": shape.key,
        "drafter": drafter or "",
        "precision": "bf16",
        "tp": 1,
        "concurrency": point["batch"],
        "k": k,
        # The harness verifies all w tokens and keeps them (no rollback): the step it times is one whose
        # acceptance length is w. `calibrate` needs a value for k > 0; step_ms does not depend on it.
        "al": k + 1,
        "context": point["context"],
        "step_ms": verify + drafts,
        "verify_ms": verify,
        "drafter_ms": drafts,
        "dense_ms": total("dense_ms"),
        "experts_ms": total("experts_ms"),
        "attention_ms": total("attention_ms"),
        "lm_head_ms": point["lm_head_ms"],
        "draft_forward_ms": draft_forward_ms if drafter else 0.0,
        "experts_touched": sum(p["touched"] for p in moe) / len(moe) if moe else 0,
        "moe_impl": "/".join(sorted({p["impl"] for p in moe})) if moe else "",
        "attention_impl": "/".join(sorted({p["attention_impl"] for p in point["types"].values()})),
    }


def fmt(value):
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def write_csv(path, header_lines, columns, rows):
    """Writes `#` header lines, then the header and rows (the caller has checked --force)."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        for line in header_lines:
            f.write(f"# {line}\n")
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([fmt(row[c]) for c in columns])
