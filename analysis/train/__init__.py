"""Supervised training: losses, the Parquet data loader and the training loop."""
