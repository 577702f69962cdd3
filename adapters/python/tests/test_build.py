"""The kit's own build backend (build_backend.py): a wheel and an sdist
from the standard library alone, whose metadata is pyproject.toml's."""
import base64
import hashlib
import os
import sys
import tarfile
import tempfile
import unittest
import zipfile

KIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, KIT)
import build_backend  # noqa: E402


class BuildTest(unittest.TestCase):
    def test_metadata_is_pyprojects(self):
        try:
            import tomllib
        except ImportError:
            self.skipTest("tomllib needs Python 3.11")
        with open(os.path.join(KIT, "pyproject.toml"), "rb") as f:
            proj = tomllib.load(f)
        p = proj["project"]
        want = build_backend.PROJECT
        self.assertEqual((p["name"], p["version"], p["description"], p["requires-python"], p["license"]["text"], p["dependencies"]),
                         (want["name"], want["version"], want["summary"], want["requires_python"], want["license"], want["dependencies"]))
        self.assertEqual(proj["build-system"], {"requires": [], "build-backend": "build_backend", "backend-path": ["."]})

    def test_wheel_holds_the_package_and_a_true_record(self):
        with tempfile.TemporaryDirectory() as d:
            name = build_backend.build_wheel(d)
            self.assertEqual(name, "bitparity_adapter-1.0.0-py3-none-any.whl")
            with zipfile.ZipFile(os.path.join(d, name)) as z:
                names = z.namelist()
                self.assertIn("bitparity_adapter/scan.py", names)
                self.assertIn("bitparity_adapter-1.0.0.dist-info/METADATA", names)
                record = z.read("bitparity_adapter-1.0.0.dist-info/RECORD").decode().splitlines()
                self.assertEqual(len(record), len(names))
                for line in record:
                    path, digest, size = line.rsplit(",", 2)
                    if path.endswith("RECORD"):
                        continue
                    data = z.read(path)
                    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                    self.assertEqual((digest, int(size)), ("sha256=" + h, len(data)), path)
                meta = z.read("bitparity_adapter-1.0.0.dist-info/METADATA").decode()
                self.assertIn("Requires-Dist: numpy", meta)

    def test_sdist_builds_again(self):
        with tempfile.TemporaryDirectory() as d:
            name = build_backend.build_sdist(d)
            with tarfile.open(os.path.join(d, name)) as t:
                names = t.getnames()
            for want in ("pyproject.toml", "build_backend.py", "README.md", "PKG-INFO", "bitparity_adapter/serve.py"):
                self.assertIn("bitparity_adapter-1.0.0/" + want, names)


if __name__ == "__main__":
    unittest.main()
