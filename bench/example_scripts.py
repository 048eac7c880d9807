"""The examples are scripts beside their data, not an installed package: one of them imported as a module."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load(name: str, path):
    """The script ``path`` (from the checkout's root, or absolute) imported as module ``name``."""
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
