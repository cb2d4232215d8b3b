"""Admin uploads: the request stores the file as "checking"; a worker task marks it ready or rejected."""

import json
import math
from html import escape
import struct
from pathlib import Path

import pytest
import torch
from django.core.files.uploadedfile import SimpleUploadedFile

from analysis.checkpoint import file_sha256, save_checkpoint
from analysis.models.chessformer import PRESETS, Chessformer
from webapp.networks.models import Network
from webapp.networks import tasks

pytestmark = pytest.mark.django_db
ADD_URL = "/admin/networks/network/add/"


@pytest.fixture
def queued_checks(monkeypatch):
    """The checks the admin queues: (network id, queue) each."""
    sent = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue: sent.append((args[0], queue)))
    return sent


def upload(admin_client, django_capture_on_commit_callbacks, name: str, data: bytes, filename="net.safetensors"):
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(ADD_URL, {
            "name": name, "file": SimpleUploadedFile(filename, data), "card": "", "queue": "cpu", "active": "on",
        }, follow=True)
    assert response.status_code == 200
    return Network.objects.filter(name=name).first(), response


def test_an_upload_is_checking_and_not_offered_until_a_worker_marks_it_ready(
        admin_client, client, django_capture_on_commit_callbacks, queued_checks, tiny_checkpoint, material_network):
    data = Path(tiny_checkpoint).read_bytes()
    network, response = upload(admin_client, django_capture_on_commit_callbacks, "uploaded", data)
    assert "A worker is checking uploaded" in response.content.decode()
    assert network.status == Network.Status.CHECKING and queued_checks == [(network.pk, "background")]
    assert network.checksum == file_sha256(tiny_checkpoint) and network.family == "" and network.parameters == 0
    assert Path(network.file.path).read_bytes() == data
    # Checking: the site does not offer it.
    assert 'value="uploaded"' not in client.get("/").content.decode()
    refused = client.post("/", {"network": "uploaded", "search": "value", "pgn": "1. e4 *"})
    assert refused.status_code == 400 and "Unknown network &#x27;uploaded&#x27;" in refused.content.decode()

    assert tasks.check_network.run(network.pk) == Network.Status.READY
    network.refresh_from_db()
    assert network.family == "chessformer" and network.preset == "cf-tiny" and network.parameters > 0
    assert network.caps.attention == (2, 4) and network.caps.policy and not network.caps.action_values
    assert network.input_encoding == "lc0/INPUT_CLASSICAL_112_PLANE"
    assert network.is_untrained and "UNTRAINED" in network.card and network.status_message == ""
    assert 'value="uploaded"' in client.get("/").content.decode()
    assert tasks.check_network.run(network.pk) == "not checking"  # a redelivered check does nothing
    again, response = upload(admin_client, django_capture_on_commit_callbacks, "again", data)
    assert again is None and "already registered as &#x27;uploaded&#x27;" in response.content.decode()


def rewritten(source: Path, target: Path, **metadata) -> bytes:
    """``source`` with some header metadata replaced (tensor data untouched)."""
    raw = source.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    header["__metadata__"].update(metadata)
    encoded = json.dumps(header).encode()
    return struct.pack("<Q", len(encoded)) + encoded + raw[8 + length:]


def nan_checkpoint(folder: Path) -> bytes:
    model = Chessformer(PRESETS["cf-tiny"])
    with torch.no_grad():
        model.embed.weight.fill_(math.nan)
    # Marked trained, as the probe's all-NaN upload was: the flag proves nothing about the numbers.
    return save_checkpoint(folder / "nan.safetensors", model, trained=True).read_bytes()


@pytest.mark.parametrize("make, fragment", [
    (lambda ckpt, tmp: b"\x01\x02", "truncated"),
    (lambda ckpt, tmp: b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all}", "damaged safetensors header"),
    (lambda ckpt, tmp: b"PK\x03\x04" + b"\x00" * 64, "pickled PyTorch file"),
    (lambda ckpt, tmp: rewritten(ckpt, tmp, config=json.dumps(dict(PRESETS["cf-tiny"].to_dict(), layers=1000))),
     "bad chessformer config: layers 1000 is over the limit of 64"),
    # Issue 10's bad input: an unknown family, an encoding the family does not accept, a config
    # that does not fit its type, and one that fits but does not match the tensors.
    (lambda ckpt, tmp: rewritten(ckpt, tmp, family="alphazero"), "unknown model family 'alphazero'"),
    (lambda ckpt, tmp: rewritten(ckpt, tmp, input_encoding="chessbench/fen-77"),
     "input encoding 'chessbench/fen-77' is not one chessformer accepts"),
    (lambda ckpt, tmp: rewritten(ckpt, tmp, config=json.dumps(dict(PRESETS["cf-tiny"].to_dict(), depth=3))),
     "bad chessformer config: "),
    (lambda ckpt, tmp: rewritten(ckpt, tmp, config=json.dumps(dict(PRESETS["cf-tiny"].to_dict(), layers=3))),
     "tensors do not match the chessformer config: missing layers.2."),
    (lambda ckpt, tmp: nan_checkpoint(tmp), "the network gave non-finite output (wdl, q, q_err, st, st_err, "
                                            "attention, policy) for the position rnbqkbnr/pppppppp/8/8/8/8/"),
])
def test_a_bad_upload_is_rejected_by_the_worker_with_the_reason_in_the_admin(
        admin_client, django_capture_on_commit_callbacks, queued_checks, tiny_checkpoint, tmp_path, make, fragment):
    network, _ = upload(admin_client, django_capture_on_commit_callbacks, "bad", make(Path(tiny_checkpoint), tmp_path))
    assert network.status == Network.Status.CHECKING and len(queued_checks) == 1
    uploaded = network.path
    assert tasks.check_network.run(network.pk) == Network.Status.REJECTED
    network.refresh_from_db()
    assert network.status == Network.Status.REJECTED and fragment in network.status_message
    assert str(uploaded) not in network.status_message  # the reason, not the storage path
    assert not uploaded.exists()  # nothing of a refused upload stays on disk
    assert not Network.objects.offered().filter(name="bad").exists()
    page = admin_client.get(f"/admin/networks/network/{network.pk}/change/").content.decode()
    assert "rejected" in page and escape(fragment.split(":")[0]) in page


def test_a_check_of_a_file_replaced_meanwhile_records_nothing(
        admin_client, django_capture_on_commit_callbacks, queued_checks, tiny_checkpoint, monkeypatch):
    from webapp.networks import registry

    network, _ = upload(admin_client, django_capture_on_commit_callbacks, "swapped", Path(tiny_checkpoint).read_bytes())
    inspect = registry.inspect_checkpoint

    def inspect_while_another_file_arrives(path):
        facts = inspect(path)
        Network.objects.filter(pk=network.pk).update(checksum="0" * 64)  # a new upload, its own check to come
        return facts

    monkeypatch.setattr(registry, "inspect_checkpoint", inspect_while_another_file_arrives)
    assert tasks.check_network.run(network.pk) == "superseded"
    network.refresh_from_db()
    assert network.status == Network.Status.CHECKING and network.family == "" and network.checksum == "0" * 64


def test_an_lc0_pb_gz_upload_is_converted_by_the_worker_and_replaces_the_upload(
        admin_client, client, django_capture_on_commit_callbacks, queued_checks, material_network):
    from analysis.models.lc0.convert.reader import read_net
    from tests.conftest import require_shared_data

    source = require_shared_data("lc0/synthetic/synth_se_2x16_wdl_mlh.pb.gz")
    network, response = upload(admin_client, django_capture_on_commit_callbacks, "se", source.read_bytes(),
                               filename="synth.pb.gz")
    assert network.status == Network.Status.CHECKING and network.path.name.endswith(".pb.gz")
    uploaded = network.path
    assert tasks.check_network.run(network.pk) == Network.Status.READY
    network.refresh_from_db()
    assert network.family == "lc0-resnet" and network.trained and network.caps.wdl and network.caps.policy
    assert network.input_encoding == "lc0/INPUT_CLASSICAL_112_PLANE" and network.status_message == ""
    assert network.path.suffix == ".safetensors" and network.checksum == file_sha256(network.path)
    assert network.provenance["sha256"] == read_net(source).sha256 == file_sha256(source)
    assert not uploaded.exists()  # the converted checkpoint replaced the upload
    assert 'value="se"' in client.get("/").content.decode()
    assert tasks.check_network.run(network.pk) == "not checking"


def test_a_bad_pb_gz_upload_is_rejected_with_the_reason_and_nothing_written(
        admin_client, django_capture_on_commit_callbacks, queued_checks):
    network, _ = upload(admin_client, django_capture_on_commit_callbacks, "junk", b"\x1f\x8b not really gzip",
                        filename="junk.pb.gz")
    assert network.status == Network.Status.CHECKING
    uploaded = network.path
    folder = uploaded.parent
    assert tasks.check_network.run(network.pk) == Network.Status.REJECTED
    network.refresh_from_db()
    assert network.status == Network.Status.REJECTED and "gzip" in network.status_message
    assert str(uploaded) not in network.status_message and str(folder) not in network.status_message
    assert list(folder.iterdir()) == []  # no converted or partial file left, and the refused upload deleted
    assert not Network.objects.offered().filter(name="junk").exists()
    page = admin_client.get(f"/admin/networks/network/{network.pk}/change/").content.decode()
    assert "rejected" in page


def test_an_upload_of_another_kind_of_file_is_refused_in_the_form(admin_client, django_capture_on_commit_callbacks,
                                                                 queued_checks):
    network, response = upload(admin_client, django_capture_on_commit_callbacks, "onnx", b"\x00" * 16,
                               filename="net.onnx")
    assert network is None and ".pb.gz" in response.content.decode() and queued_checks == []


def test_a_refused_form_keeps_the_checked_file_for_the_next_try(
        admin_client, django_capture_on_commit_callbacks, queued_checks, tiny_checkpoint, tiny_network, settings):
    from html import unescape
    import re

    data = rewritten(Path(tiny_checkpoint), None, seed="kept")  # not cf-tiny-test's bytes: not a duplicate
    # The name is taken: the form is refused, but the file passed its checks and is kept.
    network, response = upload(admin_client, django_capture_on_commit_callbacks, tiny_network.name, data,
                               filename="mine.safetensors")
    page = unescape(response.content.decode())
    assert network.pk == tiny_network.pk and "already exists" in page
    assert "Kept from your last try: mine.safetensors" in page
    token = re.search(r'name="kept_file" value="([^"]+)"', response.content.decode()).group(1)
    # Sent again with another name and no file: the kept file is the upload.
    with django_capture_on_commit_callbacks(execute=True):
        again = admin_client.post(ADD_URL, {"name": "second-try", "kept_file": token, "card": "", "queue": "cpu",
                                            "active": "on"}, follow=True)
    assert again.status_code == 200
    kept = Network.objects.get(name="second-try")
    assert Path(kept.file.path).read_bytes() == data and kept.status == Network.Status.CHECKING
    assert queued_checks == [(kept.pk, "background")]
    assert not any(Path(settings.MEDIA_ROOT, "kept-uploads").iterdir())  # the kept copy is gone once used
    # A forged or expired token is refused with a message, not a server error.
    forged = admin_client.post(ADD_URL, {"name": "third", "kept_file": token[:-3] + "abc", "card": "",
                                         "queue": "cpu", "active": "on"})
    assert forged.status_code == 200 and "expired; choose it again" in unescape(forged.content.decode())


def test_the_add_page_shows_no_facts_before_a_file(admin_client):
    page = admin_client.get(ADD_URL).content.decode()
    for fact in ("Checksum", "Parameters", "Trained", "Input encoding", "Capabilities", "Status message"):
        assert f"<label>{fact}:</label>" not in page and f">{fact}<" not in page, fact
    assert 'name="file"' in page and 'name="name"' in page
