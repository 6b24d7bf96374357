"""Execute every notebook in this folder in memory (the committed files stay output-free); any failing
cell fails the run. ALSIM names the binary the notebooks call."""

import pathlib
import sys

import nbclient
import nbformat

here = pathlib.Path(__file__).parent
failed = 0
for path in sorted(here.glob("*.ipynb")):
    notebook = nbformat.read(path, as_version=4)
    try:
        nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(here)}}).execute()
        print(f"notebook {path.name}: ok")
    except Exception as err:  # a failing cell: report it and keep going, then fail the run
        failed += 1
        print(f"notebook {path.name}: FAILED\n{err}", file=sys.stderr)
sys.exit(1 if failed else 0)
