"""``manage.py head_atlas NAME [...]``: compute and store networks' head atlases here and now
(what the worker does after an upload), e.g. after replacing a shipped checkpoint."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from analysis.heads import AtlasConfig
from analysis.heads.sample import SAMPLE_SIZE
from webapp.networks.atlas import compute_and_store, wants_atlas
from webapp.networks.models import Network


class Command(BaseCommand):
    help = "Compute the head atlas of the named networks (all networks with attention with --all)."

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="*")
        parser.add_argument("--all", action="store_true", help="every active network with attention maps")
        parser.add_argument("--positions", type=int, default=SAMPLE_SIZE)
        parser.add_argument("--device", default=None)

    def handle(self, *args, **opts):
        names = opts["names"]
        if not 1 <= opts["positions"] <= SAMPLE_SIZE:
            raise CommandError(f"--positions must be 1 to {SAMPLE_SIZE}")
        networks = list(Network.objects.filter(active=True)) if opts["all"] else [self._network(n) for n in names]
        if not networks:
            raise CommandError("name a network, or use --all")
        for network in networks:
            if not wants_atlas(network):
                if not opts["all"]:
                    raise CommandError(f"{network.name} has no attention maps, so it has no head atlas")
                continue
            try:
                row = compute_and_store(network, AtlasConfig(positions=opts["positions"]), opts["device"])
            except Exception as exc:
                raise CommandError(f"{network.name}: {exc}") from None
            counts = ", ".join(f"{label} {sum(c)}" for label, c in sorted(_counts(row.data).items()))
            self.stdout.write(f"{network.name}: {counts}")

    @staticmethod
    def _network(name: str) -> Network:
        network = Network.objects.filter(name=name).first()
        if network is None:
            raise CommandError(f"unknown network {name!r}")
        return network


def _counts(data: dict) -> dict[str, list[int]]:
    from analysis.heads import HeadMeasurements

    return HeadMeasurements.from_dict(data).counts()
