"""Execute every notebook in this folder; any failing cell fails the run. ALSIM names the binary the
notebooks call.

CI executes them in memory (`python3 notebooks/run.py`): the committed files are not touched, and each
cell's printed output must be what the committed notebook shows, so a figure quoted there cannot go stale
(the figures' pixels are not compared: a matplotlib upgrade moves them). With `--save`, each executed
notebook is written back with its outputs, figures included, so that GitHub shows them; do that when a
notebook or what it prints changes, and commit the result."""

import pathlib
import sys

import nbclient
import nbformat

here = pathlib.Path(__file__).parent


def printed(notebook):
    """Each code cell's text output: what it printed and the values it showed, less figures' reprs."""
    cells = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        text = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                text.append(out.get("text", ""))
            elif "image/png" not in out.get("data", {}):
                text.append(out.get("data", {}).get("text/plain", ""))
        cells.append("".join(text))
    return cells


save = "--save" in sys.argv[1:]
failed = 0
for path in sorted(here.glob("*.ipynb")):
    notebook = nbformat.read(path, as_version=4)
    committed = printed(notebook)
    try:
        nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(here)}}).execute()
        figures = sum(1 for cell in notebook.cells for out in cell.get("outputs", []) if "image/png" in out.get("data", {}))
        if figures == 0:
            raise RuntimeError("no figure was shown (a backend that draws off-screen, or a plot that never ran)")
        if save:
            nbformat.write(notebook, path)
        else:
            for i, (was, now) in enumerate(zip(committed, printed(notebook))):
                if was != now:
                    raise RuntimeError(
                        f"code cell {i + 1} prints other than the committed notebook shows (re-run with --save and "
                        f"commit):\n--- committed\n{was}--- now\n{now}"
                    )
        print(f"notebook {path.name}: ok, {figures} figure(s){', saved with its outputs' if save else ''}")
    except Exception as err:  # a failing cell: report it and keep going, then fail the run
        failed += 1
        print(f"notebook {path.name}: FAILED\n{err}", file=sys.stderr)
sys.exit(1 if failed else 0)
