"""Training: the Parquet data loader, the supervised loop, self-play, and Giraffe's programme (``giraffe``)."""
