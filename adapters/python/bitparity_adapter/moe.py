"""MoE routing: the declared top-k tie-break, and a probe that states
which tie-break a top-k function (torch.topk) actually has.

bitparity's op moe_route (ops/moeroute, docs/moe.md) chooses, for a row of
probabilities q, the k experts in rank order: a larger q first; among equal
q the lowest expert index first (tie="lowest", the default a target that
declares nothing is held to) or the highest (tie="highest"); a NaN ranks
below every number. The chosen weights are renormalised as the oracle
does: W = ((w[0] + w[1]) + ...) + w[k-1] in fp32, rank order, then w[j] / W.

torch.topk documents no tie-break ("the indices of equal elements are not
guaranteed"); `tie_behaviour` runs a top-k function on rows whose k-th and
(k+1)-th largest values are equal, and says which order it picked.
"""

import numpy as np

TIES = ("lowest", "highest")


def select(q, k, tie="lowest"):
    """The expert ids [rows, k] (int64) of q [rows, experts] in rank order,
    with the declared tie-break."""
    if tie not in TIES:
        raise ValueError("tie-break %r: want one of %s" % (tie, ", ".join(TIES)))
    q = np.asarray(q, dtype=np.float32)
    if q.ndim != 2 or not 1 <= k <= q.shape[1]:
        raise ValueError("select: q of shape %s and k = %d: want [rows, experts] and 1 <= k <= experts" % (q.shape, k))
    idx = np.broadcast_to(np.arange(q.shape[1]), q.shape)
    second = idx if tie == "lowest" else -idx
    nan = np.isnan(q)
    # np.lexsort sorts by its last key first: NaN after numbers, then the
    # larger q, then the index in the tie-break's order.
    order = np.stack([np.lexsort((second[r], -np.where(nan[r], 0, q[r]), nan[r])) for r in range(q.shape[0])])
    return order[:, :k].astype(np.int64)


def renormalise(w):
    """w [rows, k] (fp32, rank order) divided by its sum, summed in order:
    ((w[0] + w[1]) + ...) + w[k-1], each add rounded to fp32."""
    w = np.asarray(w, dtype=np.float32)
    total = w[:, 0].copy()
    for j in range(1, w.shape[1]):
        total = (total + w[:, j]).astype(np.float32)
    return (w / total[:, None]).astype(np.float32)


def tie_rows(rows, experts, k, seed=0):
    """rows x experts fp32 probabilities, each row with a tie at its top-k
    boundary: random values, then the (k+1)-th largest set equal to the k-th.
    Row 0 is all equal (every expert tied). k must be below experts."""
    if not 1 <= k < experts:
        raise ValueError("tie_rows: k = %d, want 1 <= k < experts (%d)" % (k, experts))
    rng = np.random.default_rng(seed)
    q = rng.random((rows, experts), dtype=np.float32)
    for r in range(rows):
        o = select(q[r:r + 1], k + 1)[0]
        q[r, o[k]] = q[r, o[k - 1]]
    q[0] = np.float32(1) / np.float32(experts)
    return q


def tie_behaviour(topk, shapes=((8, 2), (128, 8), (256, 8), (1024, 8)), batches=(1, 64, 4096), seed=0):
    """Runs topk(q, k) -> ids [rows, k] on tie_rows at every (experts, k) of
    shapes and every number of rows of batches, and returns
    (verdict, lines): verdict is "lowest" or "highest" when every row's ids
    equal select's with that tie-break, else "undeclared"; lines say, per
    shape and batch, how many rows matched each."""
    lines, seen = [], set()
    for experts, k in shapes:
        for rows in batches:
            q = tie_rows(rows, experts, k, seed)
            got = np.asarray(topk(q, k)).astype(np.int64)
            match = {t: int((got == select(q, k, t)).all(axis=1).sum()) for t in TIES}
            lines.append("experts=%d top_k=%d rows=%d: lowest index first on %d, highest on %d of %d tie rows"
                         % (experts, k, rows, match["lowest"], match["highest"], rows))
            seen.update(t for t in TIES if match[t] == rows)
            if not any(match[t] == rows for t in TIES):
                seen.add("neither")
    verdict = seen.pop() if len(seen) == 1 and "neither" not in seen else "undeclared"
    return verdict, lines
