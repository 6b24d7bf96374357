"""The expert-parallel exchange harness's parts: `plan` (sizes, routing, rows; no torch) and `run` (the timed
all-to-alls, one process per GPU)."""
