"""Generators of the documentation's pages and pictures, run by ``docs/hooks.py`` at every build."""
