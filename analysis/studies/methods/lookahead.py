"""``lookahead``: residual patching by square and readout point (filled in next)."""
