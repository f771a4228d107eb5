"""Command line: ``python -m stridewidget.bench [--device auto|cpu|cuda] [--quick] [--cases ...]
[--json out.json] [--plot out.png] [--threads N]``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ._cases import CASES
from ._harness import format_table, run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stridewidget.bench",
        description="Time and size layout-sensitive tensor operations; every variant is first "
        "checked against a reference result. Prints a table; optionally writes JSON and figures.",
    )
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--quick", action="store_true", help="small sizes, short timing (CI)")
    parser.add_argument(
        "--cases",
        nargs="+",
        choices=list(CASES),
        metavar="CASE",
        help=f"cases to run (ceiling always runs first); choose from {', '.join(CASES)}",
    )
    parser.add_argument("--json", type=Path, metavar="OUT.json", help="write the results here")
    parser.add_argument(
        "--plot", type=Path, metavar="OUT.png", help="write one figure per case as OUT-<case>.png"
    )
    parser.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help="torch CPU threads (default: torch's current setting)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    # checked before the (long) run, so a bad option costs nothing
    cores = os.cpu_count() or 1
    if args.threads is not None and not 1 <= args.threads <= cores:
        parser.error(
            f"--threads must be from 1 to {cores} (this machine's CPUs), got {args.threads}"
        )
    for option, path in (("--json", args.json), ("--plot", args.plot)):
        if path is not None and (path.is_dir() or not path.name):
            parser.error(f"{option} {path} is a folder: give a file name such as {path / 'out'}")
    try:
        results = run(
            args.device,
            quick=args.quick,
            cases=args.cases,
            num_threads=args.threads,
            progress=not args.no_progress and sys.stderr.isatty(),
        )
    except RuntimeError as error:
        parser.exit(2, f"error: {error}\n")
    print(format_table(results))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1) + "\n")
        print(f"\nresults written to {args.json}")
    if args.plot:
        # Imported only when asked: matplotlib is slow to import.
        from ._plot import save_plots

        args.plot.parent.mkdir(parents=True, exist_ok=True)
        for path in save_plots(results, args.plot):
            print(f"figure written to {path}")
    failed = [
        f"{case['name']}: {v['name']}"
        for case in results["cases"]
        for v in case["variants"]
        if not v["matches_reference"]
    ]
    if failed:
        print(
            "\nvariants that do NOT match their reference:\n  " + "\n  ".join(failed),
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
