"""A test adapter that returns its input x as y, bits untouched (rmsnorm
shapes, output dtype = input dtype): it isolates the harness's transport
cost (framing, pipes, conversions) from any computation."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "adapters", "python"))
import bitparity_adapter as bp  # noqa: E402


def echo(req):
    return bp.Raw(req.bits("x"))


sys.exit(bp.serve({"rmsnorm": bp.Op(echo, ulp_bound=0, about="echoes x", request=True)}, name="echo"))
