"""A refused upload leaves nothing on disk (issue 31: 14 refused files stayed in media/networks/
after the probe), and its reason is the checkpoint library's words."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from analysis.checkpoint import CheckpointError
from webapp.networks.models import Network
from webapp.networks import registry

pytestmark = pytest.mark.django_db
ADD_URL = "/admin/networks/network/add/"


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    monkeypatch.setattr("workers.dispatch.send_task", lambda *args, **kwargs: None)


def upload(admin_client, django_capture_on_commit_callbacks, name: str, data: bytes, filename: str) -> Network:
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(ADD_URL, {"name": name, "file": SimpleUploadedFile(filename, data), "card": "",
                                               "queue": "cpu", "active": "on"}, follow=True)
    assert response.status_code == 200
    return Network.objects.get(name=name)


def stored_files(settings) -> list[str]:
    folder = Path(settings.MEDIA_ROOT, "networks")
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


@pytest.mark.parametrize("data, filename, fragment", [
    (b"\x00" * 64, "zeros.safetensors", "safetensors"),
    (b"\x1f\x8b not really gzip", "junk.pb.gz", "gzip"),
], ids=["safetensors", "lc0"])
def test_a_rejected_upload_is_deleted(admin_client, django_capture_on_commit_callbacks, settings, data, filename,
                                      fragment):
    network = upload(admin_client, django_capture_on_commit_callbacks, "bad", data, filename)
    assert network.path.is_file() and stored_files(settings) == [network.path.name]
    assert registry.check_network(network.pk) == Network.Status.REJECTED
    network.refresh_from_db()
    assert network.status == Network.Status.REJECTED and fragment in network.status_message
    assert not network.file and stored_files(settings) == []
    page = admin_client.get(f"/admin/networks/network/{network.pk}/change/")
    assert page.status_code == 200 and "rejected" in page.content.decode()


def test_a_check_that_fails_in_itself_deletes_the_file_too(admin_client, django_capture_on_commit_callbacks,
                                                           settings, tiny_checkpoint, monkeypatch):
    network = upload(admin_client, django_capture_on_commit_callbacks, "odd", Path(tiny_checkpoint).read_bytes(),
                     "odd.safetensors")

    def broken(path):
        raise RuntimeError("a bug in the probe")

    monkeypatch.setattr(registry, "inspect_checkpoint", broken)
    assert registry.check_network(network.pk) == Network.Status.REJECTED
    network.refresh_from_db()
    assert network.status_message == "the check itself failed: RuntimeError: a bug in the probe"
    assert stored_files(settings) == []


def test_the_library_s_words_are_the_reason(admin_client, django_capture_on_commit_callbacks, settings,
                                            tiny_checkpoint, monkeypatch):
    """Any CheckpointError (a subclass too, such as the lc0 reader's unpack limit) is shown as is."""
    class UnpacksTooLarge(CheckpointError):
        pass

    network = upload(admin_client, django_capture_on_commit_callbacks, "big", Path(tiny_checkpoint).read_bytes(),
                     "big.safetensors")
    path = network.path

    def too_large(checked):
        raise UnpacksTooLarge(f"{checked}: the network unpacks to more than 2 GiB")

    monkeypatch.setattr(registry, "inspect_checkpoint", too_large)
    assert registry.check_network(network.pk) == Network.Status.REJECTED
    network.refresh_from_db()
    assert network.status_message == "the network unpacks to more than 2 GiB" and str(path) not in network.status_message
    assert stored_files(settings) == []


def test_a_superseded_check_deletes_nothing(admin_client, django_capture_on_commit_callbacks, settings,
                                            monkeypatch):
    """A check whose network got a new file meanwhile records nothing, and leaves the new file alone."""
    network = upload(admin_client, django_capture_on_commit_callbacks, "swapped", b"\x00" * 64, "a.safetensors")
    inspect = registry.inspect_checkpoint

    def inspect_while_another_file_arrives(path):
        Network.objects.filter(pk=network.pk).update(checksum="0" * 64)
        return inspect(path)

    monkeypatch.setattr(registry, "inspect_checkpoint", inspect_while_another_file_arrives)
    assert registry.check_network(network.pk) == "superseded"
    assert stored_files(settings) == [network.path.name]


def test_a_file_another_network_uses_is_kept(admin_client, django_capture_on_commit_callbacks, settings):
    network = upload(admin_client, django_capture_on_commit_callbacks, "first", b"\x00" * 64, "a.safetensors")
    Network.objects.create(name="twin", checksum="1" * 64, file=network.file.name, status=Network.Status.READY)
    assert registry.check_network(network.pk) == Network.Status.REJECTED
    assert stored_files(settings) == [network.path.name]


@pytest.mark.parametrize("make, words", [
    ("zeros_bomb", "the network unpacks to more than 2 GiB"),
    ("declared_tensor_bomb", "the network declares weights of 3 GiB: it unpacks to more than 2 GiB"),
])
def test_an_lc0_bomb_upload_is_refused_in_words_and_deleted(admin_client, django_capture_on_commit_callbacks,
                                                            settings, make, words):
    """The probe's over-limit Lc0 uploads were refused as "the check itself failed"."""
    from tests import lc0_bombs

    network = upload(admin_client, django_capture_on_commit_callbacks, "bomb", getattr(lc0_bombs, make)(),
                     "bomb.pb.gz")  # 3 GiB unpacked, about 3 MB uploaded
    assert registry.check_network(network.pk) == Network.Status.REJECTED
    network.refresh_from_db()
    assert network.status_message == words
    assert stored_files(settings) == []


@pytest.mark.parametrize("filename, fragment", [("net.onnx", "Only .safetensors checkpoints are accepted"),
                                                ("net.safetensors", "already registered")])
def test_an_upload_refused_by_the_form_leaves_no_file(admin_client, settings, tmp_path, tiny_checkpoint,
                                                      tiny_network, monkeypatch, filename, fragment):
    """Over FILE_UPLOAD_MAX_MEMORY_SIZE an upload is spooled to a temporary file: gone once refused."""
    from html import unescape

    from django.core.files import uploadedfile

    spooled = []
    spool_file = uploadedfile.TemporaryUploadedFile.__init__

    def recorded(self, *args, **kwargs):
        spool_file(self, *args, **kwargs)
        spooled.append(Path(self.temporary_file_path()))

    monkeypatch.setattr(uploadedfile.TemporaryUploadedFile, "__init__", recorded)

    settings.FILE_UPLOAD_TEMP_DIR = spool = tmp_path / "spool"
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 64 * 1024  # cf-tiny is 0.3 MB
    spool.mkdir()
    data = Path(tiny_checkpoint).read_bytes() if filename.endswith(".safetensors") else bytes(3 * 1024 * 1024)
    assert len(data) > settings.FILE_UPLOAD_MAX_MEMORY_SIZE
    before = stored_files(settings)
    response = admin_client.post(ADD_URL, {"name": "refused", "file": SimpleUploadedFile(filename, data), "card": "",
                                           "queue": "cpu", "active": "on"})
    assert response.status_code == 200 and fragment in unescape(response.content.decode())
    assert not Network.objects.filter(name="refused").exists()
    assert len(spooled) == 1 and spooled[0].parent == spool and not spooled[0].exists()
    assert list(spool.iterdir()) == [] and stored_files(settings) == before
    assert not Path(settings.MEDIA_ROOT, "kept-uploads").exists()
