"""The kit's PEP 517 build backend: the standard library only.

pip builds the kit with it (pyproject.toml: build-backend =
"build_backend", backend-path = ["."]), so

    pip install --no-build-isolation ./adapters/python

needs neither setuptools nor wheel, offline or behind a proxy. It writes a
pure-Python wheel (py3-none-any) of the package bitparity_adapter, an
editable wheel (a .pth file naming this directory) and an sdist. The
project's metadata is PROJECT below; tests/test_build.py checks that it
agrees with pyproject.toml's [project] table.
"""

import base64
import hashlib
import io
import os
import tarfile
import time
import zipfile

PROJECT = {
    "name": "bitparity-adapter",
    "version": "1.0.0",
    "summary": "Write a bitparity target in Python: serve({'rmsnorm': f}) with plain NumPy, PyTorch or JAX array functions",
    "requires_python": ">=3.8",
    "license": "Apache-2.0",
    "dependencies": ["numpy"],
}
PACKAGE = "bitparity_adapter"
HERE = os.path.dirname(os.path.abspath(__file__))
DIST = PROJECT["name"].replace("-", "_")
TAG = "py3-none-any"
# Zip entries get a fixed time so a build is reproducible.
EPOCH = (2020, 1, 1, 0, 0, 0)


def _metadata():
    lines = [
        "Metadata-Version: 2.1",
        "Name: " + PROJECT["name"],
        "Version: " + PROJECT["version"],
        "Summary: " + PROJECT["summary"],
        "License: " + PROJECT["license"],
        "Requires-Python: " + PROJECT["requires_python"],
    ]
    lines += ["Requires-Dist: " + d for d in PROJECT["dependencies"]]
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        return "\n".join(lines) + "\n\n" + f.read()


def _wheel_file():
    return "Wheel-Version: 1.0\nGenerator: bitparity build_backend\nRoot-Is-Purelib: true\nTag: %s\n" % TAG


def _dist_info():
    return "%s-%s.dist-info" % (DIST, PROJECT["version"])


def _package_files():
    """(path in the wheel, bytes) of every .py file of the package, sorted."""
    out = []
    pkg = os.path.join(HERE, PACKAGE)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            with open(os.path.join(pkg, name), "rb") as f:
                out.append(("%s/%s" % (PACKAGE, name), f.read()))
    return out


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def _write_wheel(wheel_directory, files):
    name = "%s-%s-%s.whl" % (DIST, PROJECT["version"], TAG)
    di = _dist_info()
    files = list(files) + [
        (di + "/METADATA", _metadata().encode()),
        (di + "/WHEEL", _wheel_file().encode()),
    ]
    record = "".join(_record_line(p, d) + "\n" for p, d in files) + di + "/RECORD,,\n"
    files.append((di + "/RECORD", record.encode()))
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            info = zipfile.ZipInfo(path, EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return name


# ---- PEP 517 hooks ------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    di = os.path.join(metadata_directory, _dist_info())
    os.makedirs(di, exist_ok=True)
    with open(os.path.join(di, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(di, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file())
    return _dist_info()


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel whose one file, a .pth, puts this directory on sys.path:
    the checkout's kit, edited in place."""
    return _write_wheel(wheel_directory, [(PACKAGE + ".pth", (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (DIST, PROJECT["version"])
    name = base + ".tar.gz"
    members = [("pyproject.toml", None), ("build_backend.py", None), ("README.md", None)]
    members += [(p, None) for p, _ in _package_files()]
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for rel, _ in members:
            with open(os.path.join(HERE, rel), "rb") as f:
                data = f.read()
            _add(t, base + "/" + rel, data)
        pkg_info = _metadata().encode()
        _add(t, base + "/PKG-INFO", pkg_info)
    return name


def _add(t, path, data):
    info = tarfile.TarInfo(path)
    info.size = len(data)
    info.mtime = int(time.mktime(EPOCH + (0, 0, -1)))
    info.mode = 0o644
    t.addfile(info, io.BytesIO(data))
