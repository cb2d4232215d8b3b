"""The worker side's infrastructure: the Celery app, task dispatch, batching, claims, shutdown, broker.

It never imports the site (``webapp``); the job code lives in the Django apps it serves
and is found by Celery's autodiscovery. The site uses ``celery_app`` and ``dispatch``;
its job code also uses the services here (``batching``, ``claims``, ``shutdown``).
"""
