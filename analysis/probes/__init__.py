"""Concept probes with controls: what each readout point of a network knows, and whether it uses it.

No Django here. ``concepts`` (the labels, python-chess), ``positions`` (balanced sets with a fixed
split), ``activations`` (every readout point per real square, an untrained copy, the input control),
``fit`` (scikit-learn probes, AUROC / R^2 with bootstrap intervals), ``erasure`` (LEACE at a
concept's best point, applied inside the forward, against random directions), ``run`` (the whole
probe as the CLI prints it) and ``doing`` (knowing against doing). See docs/probes.md.
"""
