#!/usr/bin/env python3
"""Compare the classes of a `bitparity scan --json` result (its first
scan's drift map) with those of scripts/cublas_sweep.py: the same partition
of the swept values, whatever the labels. Exit 0 when they match.

    python3 scripts/scan_compare.py scan.json sweep.json
"""
import json
import sys

scan = json.load(open(sys.argv[1]))[0]["Map"]
sweep = json.load(open(sys.argv[2]))
a = sorted(sorted(c["values"]) for c in scan["classes"])
b = sorted(sorted(c) for c in sweep["classes"])
print("scan map :", scan.get("rule") or scan["kind"], "-", len(a), "classes")
print("sweep    :", len(b), "classes")
for c in b:
    print("  sweep class from", c[0], "with", len(c), "values")
if a == b:
    print("MATCH: the same partition of", sum(map(len, a)), "values")
    sys.exit(0)
print("DIFFER")
for c in a:
    print("  scan class from", c[0], "with", len(c), "values")
sys.exit(1)
