"""What the README shows of alsim on the InferenceX snapshot, checked against alsim's output there.

Usage: check_readme.py README.md SWEEP.json PINS.txt, where SWEEP.json is `alsim sweep SNAPSHOT --format json`
and PINS.txt is `alsim pins check SNAPSHOT --allow docs/audits/inferencex-allow.yaml` (100 columns).

- The sweep sentence "N entries, N with spec decoding, N covered; ... N (entry, concurrency) rows, N with the k
  known from a pin, N of them outside the band — N below it, N of those at k = 3 against a band of k = 5–8":
  each figure is compared with the count from the rows.
- The `text` block of `pins check` output: its lines before the `…` are the start of a finding the check
  prints, and its lines after are the check's last lines (the summary).

A stale figure or line fails, naming both."""

import json
import re
import sys

readme = open(sys.argv[1], encoding="utf-8").read()
sweep = json.load(open(sys.argv[2], encoding="utf-8"))
pins = open(sys.argv[3], encoding="utf-8").read()
text = " ".join(readme.split())
pattern = (
    r"(\d+) entries, (\d+) with spec decoding, (\d+) covered;.*?(\d+) \(entry, concurrency\) rows, (\d+) with the k "
    r"known from a pin, (\d+) of them outside the band — (\d+) below it, (\d+) of those at k = 3 against a band of "
    r"k = 5–8"
)
found = re.search(pattern, text)
if not found:
    sys.exit("sweep: the README's sentence of snapshot figures was not found (its wording changed?)")
rows = sweep["rows"]
known = [r for r in rows if r["k"] is not None]
outside = [r for r in known if r["in_band"] is False]
below = [r for r in outside if r["k"] < min(r["band"])]
at_three = [r for r in below if r["k"] == 3 and r["band"] == [5, 6, 7, 8]]
names = ["entries", "with spec decoding", "covered", "rows", "k known", "outside the band", "below", "k = 3 vs 5–8"]
counts = [sweep["entries"], sweep["speculative"], sweep["covered"], len(rows), len(known), len(outside), len(below),
          len(at_three)]
stale = [f"{name}: README {shown}, sweep {count}" for name, shown, count in zip(names, found.groups(), counts)
         if int(shown) != count]
if stale:
    sys.exit("sweep: the README's snapshot figures are stale:\n  " + "\n  ".join(stale))
print(f"sweep: the README's snapshot figures hold ({', '.join(f'{n} {c}' for n, c in zip(names, counts))})")

block = re.search(r"```text\n(.*?)```", readme, re.S)
if not block or "\n…\n" not in block.group(1):
    sys.exit("pins: the README's text block of pins check output (a finding, …, the summary) was not found")
finding, summary = block.group(1).split("\n…\n")
if finding + "\n" not in pins:
    sys.exit(f"pins: the README's finding is not what the check prints on the snapshot:\n{finding}")
if not pins.endswith(summary):
    sys.exit(f"pins: the README's summary is stale:\n--- README\n{summary}--- printed\n{pins[-len(summary) - 200:]}")
print("pins: the README's finding and summary are what the check prints on the snapshot")
