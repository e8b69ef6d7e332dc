"""PEP 517 build backend for onyx: setuptools' own backend, made usable offline.

pip builds in an isolated environment that hides the interpreter's
site-packages and would download `setuptools` and `wheel` from an index.
onyx builds with the ones the system already has (Debian's python3-setuptools
and python3-wheel): pyproject.toml asks for no build requirements, and this
module puts the interpreter's own site-packages back on sys.path (after
everything else) before importing setuptools.
"""
import site
import sys


def _system_site_dirs():
    dirs = []
    for prefix in {sys.base_prefix, sys.base_exec_prefix}:
        try:
            dirs += site.getsitepackages([prefix])
        except AttributeError:  # pragma: no cover - very old virtualenv
            pass
    return dirs


try:
    import setuptools  # noqa: F401
except ImportError:
    for d in _system_site_dirs():
        if d not in sys.path:
            sys.path.append(d)
    try:
        import setuptools  # noqa: F401
    except ImportError as e:
        raise ImportError("building onyx needs setuptools and wheel: on Debian, "
                          "apt-get install python3-setuptools python3-wheel") from e

from setuptools import build_meta as _meta  # noqa: E402

build_wheel = _meta.build_wheel
build_sdist = _meta.build_sdist
prepare_metadata_for_build_wheel = _meta.prepare_metadata_for_build_wheel
if hasattr(_meta, "build_editable"):
    build_editable = _meta.build_editable
    prepare_metadata_for_build_editable = _meta.prepare_metadata_for_build_editable


def get_requires_for_build_wheel(config_settings=None):
    """Nothing to download: setuptools and wheel come from the system."""
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []
