"""Sightline's chess ML library: encodings, models, searches, data, training and evaluation.

Nothing here imports Django; the site and the workers call into this package.
"""
