"""Typed presets for experiments/train.py (``--preset=NAME``)."""

from experiments.configs.presets import PRESETS, get_preset

__all__ = ["PRESETS", "get_preset"]
