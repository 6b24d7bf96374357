"""The README's figures for `alsim sweep` on the InferenceX snapshot, checked against the sweep itself.

Usage: check_sweep.py README.md SWEEP.json (the output of `alsim sweep SNAPSHOT --format json`). The README's
sentence "N entries, N with spec decoding, N covered; ... N (entry, concurrency) rows, N with the k known from
a pin, N of them outside the band — N below it, N of those at k = 3 against a band of k = 5–8" is read and
each figure compared with the count from the rows; a stale figure fails with both values."""

import json
import re
import sys

readme, sweep = open(sys.argv[1], encoding="utf-8").read(), json.load(open(sys.argv[2], encoding="utf-8"))
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
