"""Starting a study, for the page's form and the API alike: the request is checked whole (the
network, the method for that network, the settings, the positions read in full), then the limits,
then the study is saved with its positions and queued. A refusal (``Refused``) saves nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.http import HttpRequest

from analysis.lens.description import LensDescription
from webapp.networks.lookup import out_of_service
from webapp.networks.models import Network
from webapp.ondemand.clients import client_key
from webapp.ondemand.refused import Refused, sentence
from webapp.studies import library, limits, resume
from webapp.studies.library import Source, StudyInput
from webapp.studies.models import Study
from workers.dispatch import BrokerUnavailable

UNFIT = 422  # well-formed, but not for this network or these positions


@dataclass(frozen=True)
class StudyRequest:
    """What a study is asked as (the form's and the API's fields, already of the right types)."""

    network: str
    method: str
    source: Source
    settings: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    sparring: str = ""


def network_named(name: str, what: str = "network") -> Network:
    network = Network.objects.filter(name=name).first()
    if network is None:
        raise Refused(f"Unknown {what} {name!r}.", status=UNFIT)
    refusal = out_of_service(network)
    if refusal is not None:
        raise refusal
    if network.status != Network.Status.READY:
        raise Refused(f"{network.name} is not ready yet (it is being checked).", status=409)
    return network


def checked(ask: StudyRequest) -> tuple[Network, Network | None, dict, list]:
    """(network, sparring network, settings, positions) when the study can run as asked; else ``Refused``."""
    missing = ask.source.missing()
    if missing:
        raise Refused(missing, status=UNFIT)
    network = network_named(ask.network)
    sparring = network_named(ask.sparring, "sparring network") if ask.sparring else None
    if network.path is None:
        raise Refused(f"{network.name} has no checkpoint for a study to load (a study takes apart a neural network).",
                      status=UNFIT)
    try:
        library.method(ask.method)
        why = library.why_not(ask.method, LensDescription.from_json(network.lens_description or {}))
        if why:
            raise Refused(sentence(f"{ask.method} does not apply to {network.name}: {why}"), status=UNFIT)
        settings = dict(ask.settings)
        if "sparring" in settings:  # a path here would load any file the server can read
            raise StudyInput("give the sparring network by its name in the sparring field, not in the settings")
        if sparring is not None:
            settings["sparring"] = str(sparring.path or sparring.name)
        elif library.takes_sparring(ask.method) and not settings.get("sparring"):
            raise StudyInput(f"the {ask.method} method needs a sparring network: the weaker net that makes a "
                             f"puzzle hard")
        library.parse_settings(ask.method, settings)
        items = [] if ask.source.kind == library.MINED else library.read_items(ask.source)
    except StudyInput as exc:
        raise Refused(sentence(exc.message), status=UNFIT) from None
    return network, sparring, settings, items


def start(request: HttpRequest, ask: StudyRequest) -> Study:
    """Check, count against the limits, save and queue a study; ``Refused`` otherwise (nothing saved)."""
    network, sparring, settings, items = checked(ask)
    client = client_key(request)
    refusal = limits.refusal(client)
    if refusal is not None:
        raise refusal
    user = request.user if getattr(request, "user", None) is not None and request.user.is_authenticated else None
    with transaction.atomic():
        study = Study.objects.create(
            network=network, method=ask.method, settings=settings, seed=ask.seed, sparring=sparring,
            source_kind=ask.source.kind, source_name=ask.source.name, source_text=ask.source.text,
            limit=ask.source.limit, positions=[[item.id, item.fen] for item in items], total=len(items),
            client=client, owner=user)
    try:
        resume.send(study)
    except BrokerUnavailable as exc:
        Study.objects.filter(pk=study.pk).delete()
        raise Refused.broker_down(exc, "the study") from None
    return study


def may_cancel(request: HttpRequest, study: Study) -> bool:
    """Who started it: the same client, or the signed-in owner."""
    user = getattr(request, "user", None)
    if study.owner_id is not None and user is not None and user.is_authenticated and user.pk == study.owner_id:
        return True
    return bool(study.client) and study.client == client_key(request)
