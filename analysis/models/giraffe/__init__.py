"""Giraffe (Lai 2015): hand-designed features, an evaluator and a move-evaluator network.

``model`` is the network; ``family`` registers it; ``about`` says what the site shows of it, without torch. Its training programme (the material
bootstrap, TD-Leaf(lambda) and the move evaluator's training) is ``analysis.train.giraffe``.
"""
