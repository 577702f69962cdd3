"""A test adapter of moe_route whose replies break the op's columns the
way argv[1] says: expert ids all 0 and weights 1/k, except

  dtype    expert_ids as F32 instead of I32
  shape    expert_ids with one column missing
  missing  no weights tensor
  good     nothing broken
  policy   (hello) declares schedule "tie=random"
  ulp      (hello) declares ulp_bound 2
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "adapters", "python"))
from bitparity_adapter.serve import Conn  # noqa: E402

mode = sys.argv[1]


def main():
    conn = Conn()
    while True:
        try:
            meta, tensors = conn.read()
        except EOFError:
            return 0
        seq = meta["seq"]
        if meta["frame"] == "hello":
            conn.write({"frame": "hello", "protocol": 1, "seq": seq, "op": "moe_route", "name": "badroute-" + mode,
                        "device": "cpu", "invariant": "true", "schedule": "tie=random" if mode == "policy" else "",
                        "ulp_bound": "2" if mode == "ulp" else "0", "about": "test"})
            continue
        n, k = tensors["logits"][1].shape[0], int(meta["top_k"])
        ids = np.zeros((n, k), dtype=np.float32 if mode == "dtype" else np.int32)
        if mode == "shape":
            ids = ids[:, 1:]
        out = [("expert_ids", "F32" if mode == "dtype" else "I32", np.ascontiguousarray(ids))]
        if mode != "missing":
            out.append(("weights", "F32", np.full((n, k), 1 / k, dtype=np.float32)))
        conn.write({"frame": "reply", "seq": seq}, out)


if __name__ == "__main__":
    sys.exit(main())
