#!/usr/bin/env python3
"""FlashInfer and flash-attn adapter for bitparity (bitparity_adapter.attnlibs
says what each entry runs and its flags):

    bitparity run --exec 'python3 adapters/attn_libs.py flashinfer attn_decode --fixed-split-size 2048'
    bitparity scan --exec 'python3 adapters/attn_libs.py flash-attn attn_decode --num-splits 1' --to 64 ...

Where the library does not import, it says why on stderr and exits 3
(attnlibs.SKIP_EXIT): the H200 host may not have it.
"""
import os
import sys

_kit = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python")
sys.path.insert(0, _kit)
# attnlibs by itself first: the kit's __init__ imports numpy, and the skip
# path must answer on a host without it
sys.path.insert(0, os.path.join(_kit, "bitparity_adapter"))
import attnlibs  # noqa: E402


def main(argv):
    a = attnlibs.parse(argv)
    try:
        mod = attnlibs.load(a.lib)
    except attnlibs.Skip as e:
        print("attn_libs.py: %s" % e, file=sys.stderr)
        return attnlibs.SKIP_EXIT
    import torch
    import bitparity_adapter as bp
    if a.deterministic:
        torch.use_deterministic_algorithms(True)
    device = torch.device(a.device or os.environ.get("BITPARITY_DEVICE") or "cuda")
    about = "%s %s, torch %s" % (a.lib, getattr(mod, "__version__", "?"), torch.__version__)
    fn = attnlibs.entry(a, mod, torch, device)

    def run(*args, **kw):
        try:
            return fn(*args, **kw)
        except attnlibs.Unsupported as e:
            raise bp.Unsupported(str(e)) from e
    table = {a.op: bp.Op(run, ulp_bound=2, invariant=True, layout=True, about="%s; %s" % (attnlibs.name(a), about))}
    return bp.serve(table, name=attnlibs.name(a), arrays="torch", device=device, argv=[a.op])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
