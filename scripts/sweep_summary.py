"""What gemm_scan.py and kernel_loop.py make of their sweeps (imported
from beside them): the rows that differ, the classes of rows by their
bits across the draws, and the counts."""
import numpy as np


def summarize(results, host, n):
    """Summarize one sweep of rows 1..n a draw.

    results holds, a draw, (flags, panel, panel_rows, count): flags[m-1]
    set when row m differs, panel[m-1] row m's bits, both on the device
    (host copies one to a NumPy array), and the draw's panel rows and
    count (products or launches). Returns (per_draw, classes, panel_rows,
    count, checked): per_draw the rows that differ, a list a draw;
    classes the rows 1..n grouped by their bits in every draw's panel,
    in order of first row; panel_rows and count summed over the draws;
    checked the rows compared, draws * (n(n+1)/2 + n).
    """
    per_draw, panels = [], []
    panel_rows = count = 0
    for flags, panel, pr, c in results:
        per_draw.append([int(i) + 1 for i in np.nonzero(host(flags))[0]])
        panels.append(host(panel))
        panel_rows += pr
        count += c
    classes, index = [], {}
    for m in range(1, n + 1):
        key = b"".join(p[m - 1].tobytes() for p in panels)
        if key not in index:
            index[key] = len(classes)
            classes.append([])
        classes[index[key]].append(m)
    checked = len(results) * (n * (n + 1) // 2 + n)
    return per_draw, classes, panel_rows, count, checked
