"""Ablations: variants of one network trained on one budget, measured with the shipped cards' commands,
tabulated side by side (``python -m analysis ablation run|table``)."""
