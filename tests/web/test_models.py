"""Models, network registration and the admin upload form."""

import uuid
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import IntegrityError

from analysis.checkpoint import file_sha256
from webapp.jobs.models import AnalysisJob, PositionResult, job_group_name
from webapp.networks.admin import NetworkUploadForm
from webapp.networks.models import Network

pytestmark = pytest.mark.django_db


def test_group_name_is_channels_safe():
    job_id = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert job_group_name(job_id) == "job.12345678123456781234567812345678"
    assert job_group_name(str(job_id)) == job_group_name(job_id)


def test_registered_checkpoint_records_facts(tiny_network, tiny_checkpoint):
    assert tiny_network.checksum == file_sha256(tiny_checkpoint)
    assert tiny_network.family == "chessformer" and tiny_network.preset == "cf-tiny"
    assert tiny_network.parameters > 0 and not tiny_network.trained
    assert tiny_network.is_untrained and str(tiny_network).endswith("(untrained)")
    assert "[untrained]" in tiny_network.display_label
    assert "UNTRAINED" in tiny_network.card
    assert Path(tiny_network.file.path).read_bytes() == Path(tiny_checkpoint).read_bytes()


def test_registration_is_idempotent_per_checksum(tiny_network, tiny_checkpoint):
    from webapp.networks.registry import register_checkpoint

    again = register_checkpoint(Path(tiny_checkpoint), "another-name")
    assert again.pk == tiny_network.pk and Network.objects.filter(kind="checkpoint").count() == 1


def test_deleting_a_network_removes_its_file_once_committed(tiny_network, django_capture_on_commit_callbacks):
    path = Path(tiny_network.file.path)
    with django_capture_on_commit_callbacks(execute=False) as pending:
        tiny_network.delete()
    assert path.is_file()  # not before the delete is committed
    for callback in pending:
        callback()
    assert not path.exists()


def test_material_baseline_is_not_called_untrained(material_network):
    assert not material_network.is_untrained and not material_network.caps.policy


def test_position_results_are_unique_per_key_network_and_settings(material_network):
    PositionResult.objects.create(position_key="a" * 64, network_checksum="n", settings_key="eval", data={})
    PositionResult.objects.create(position_key="a" * 64, network_checksum="n", settings_key="value:1", data={})
    with pytest.raises(IntegrityError):
        PositionResult.objects.create(position_key="a" * 64, network_checksum="n", settings_key="eval", data={})


def test_job_defaults(material_network):
    job = AnalysisJob.objects.create(network=material_network, search="value", start_fen="x", headers={})
    assert job.status == "queued" and not job.finished and job.search_settings_key == "value:1"
    assert job.title == "Position, White to move"


def _upload(name: str, data: bytes):
    return {"file": SimpleUploadedFile(name, data)}


def _form(filename: str, data: bytes, **fields):
    values = {"name": "uploaded", "queue": "cpu", "active": True, "card": ""}
    values.update(fields)
    return NetworkUploadForm(values, _upload(filename, data))


@pytest.mark.parametrize("filename, data, fragment", [
    ("net.safetensors", b"", "The submitted file is empty."),
    ("net.pt", b"whatever", "Only .safetensors checkpoints are accepted"),
])
def test_admin_refuses_what_it_can_tell_without_reading_the_file(filename, data, fragment):
    form = _form(filename, data)
    assert not form.is_valid()
    assert fragment in " ".join(form.errors["file"])
    assert Network.objects.count() == 0


def test_admin_upload_size_limit(tiny_checkpoint, settings):
    settings.SIGHTLINE_MAX_CHECKPOINT_BYTES = 100
    form = _form("tiny.safetensors", Path(tiny_checkpoint).read_bytes())
    assert not form.is_valid() and "the limit is 100" in " ".join(form.errors["file"])


def test_admin_pages_render(admin_client, tiny_network):
    assert admin_client.get("/admin/networks/network/").status_code == 200
    assert admin_client.get(f"/admin/networks/network/{tiny_network.pk}/change/").status_code == 200
    assert admin_client.get("/admin/networks/network/add/").status_code == 200


def test_job_titles(material_network):
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job

    assert create_job(parse_pgn("1. e4 e5 *"), material_network, "value", 1, dispatch=False).title == "Game, 2 plies"
    named = create_job(parse_pgn('[White "Anna"]\n\n1. e4 *'), material_network, "value", 1, dispatch=False)
    assert named.title == "Anna - ?"


def test_fen_job_title_is_short_and_its_root_is_not_the_start(material_network):
    from webapp.jobs.gameinput import parse_fen, parse_pgn
    from webapp.jobs.jobs import create_job

    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3"
    job = create_job(parse_fen(fen), material_network, "value", 1, dispatch=False)
    assert job.title == "Position, move 3, Black to move, material even" and fen not in job.title
    other = create_job(parse_fen("6k1/5ppp/8/8/8/8/8/R5K1 b - - 0 40"), material_network, "value", 1, dispatch=False)
    assert other.title == "Position, move 40, Black to move, White up 2"
    assert job.root_label == "Set-up position (Black to move)"
    game = create_job(parse_pgn("1. e4 {good} $1 *"), material_network, "value", 1, dispatch=False)
    assert game.root_label == "Start position"
    game.refresh_from_db()
    assert game.nodes[1]["comment"] == "good" and game.nodes[1]["nags"] == [1]
