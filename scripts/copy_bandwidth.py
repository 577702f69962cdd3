#!/usr/bin/env python3
"""Device-to-device copy bandwidth with torch: the bound a scan is measured
against (docs/performance.md, "Scan benchmark").

It copies one buffer of SIZE bytes into another REPEAT times (after two
warm-up copies), timed with CUDA events, and prints JSON with the bytes
moved per second, counting each copy as SIZE bytes read plus SIZE written
(the convention of the datasheet's memory bandwidth).

    python3 scripts/copy_bandwidth.py [--size-gib 2] [--repeat 20] [--device cuda]
"""
import argparse
import json
import sys

import torch


def main(argv):
    ap = argparse.ArgumentParser(prog="copy_bandwidth.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-gib", type=float, default=2.0)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("copy_bandwidth.py: no CUDA device", file=sys.stderr)
        return 3
    n = int(a.size_gib * 2**30)
    src = torch.empty(n, dtype=torch.uint8, device=a.device).fill_(1)
    dst = torch.empty_like(src)
    for _ in range(2):
        dst.copy_(src)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(a.repeat):
        dst.copy_(src)
    end.record()
    end.synchronize()
    sec = start.elapsed_time(end) / 1e3
    moved = 2 * n * a.repeat
    print(json.dumps({"gpu": torch.cuda.get_device_name(torch.device(a.device)), "torch": torch.__version__,
                      "bytes_per_copy": n, "copies": a.repeat, "seconds": round(sec, 6),
                      "bytes_per_second": round(moved / sec)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
