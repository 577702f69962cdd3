"""adapters/numpy_ops.py as an adapter that predates the scan frames: its
hello has no scan field (tests of the slow path of scan --exec)."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "adapters"))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "adapters", "python"))
import bitparity_adapter.scan  # noqa: E402
import numpy_ops  # noqa: E402

bitparity_adapter.scan.SCAN_VERSION = ""
sys.exit(numpy_ops.main(sys.argv[1:]))
