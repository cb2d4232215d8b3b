"""Inputs the reliability probe (issue 31) found answered with 500: each now gets a 400 with
one clear message and saves nothing (N3: JSON nested hundreds of levels deep; N4: a lone
UTF-16 surrogate, which is not text, in a field)."""

import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token

from webapp.jobs.models import AnalysisJob

GAME = "1. e4 e5 2. Nf3 *"


@pytest.fixture
def token(db):
    return Token.objects.create(user=User.objects.create_user("scripter", password="pw")).key


def post_json(client, body: str, token: str):
    return client.post("/api/jobs/", body, content_type="application/json", HTTP_AUTHORIZATION=f"Token {token}")


@pytest.mark.parametrize("depth", [40, 990, 5_000, 100_000])
def test_deeply_nested_json_is_a_400(client, material_network, token, depth):
    nested = "[" * depth + "]" * depth
    response = post_json(client, f'{{"pgn": "{GAME}", "network": "material", "extra": {nested}}}', token)
    assert response.status_code == 400, response.content[:300]
    assert response.json() == {"error": "The JSON is nested too deeply: at most 32 levels of objects and lists."}
    assert AnalysisJob.objects.count() == 0


def test_deep_nesting_at_the_top_level_is_a_400(client, material_network, token):
    response = post_json(client, "[" * 50_000 + "]" * 50_000, token)
    assert response.status_code == 400 and "nested too deeply" in response.json()["error"]


def test_nesting_within_the_bound_is_read(client, material_network, token):
    nested = "[" * 30 + "]" * 30
    response = post_json(client, f'{{"pgn": "1. e4 Ke7 *", "network": "material", "search": "value", "extra": {nested}}}', token)
    assert response.status_code == 422 and "illegal move" in response.json()["error"]  # the form read it


@pytest.mark.parametrize("body, where", [
    ('{"pgn": "1. e4 \\ud800 *", "network": "material"}', "pgn"),
    ('{"pgn": "1. e4 *", "network": "\\ud800"}', "network"),
    ('{"pgn": "1. e4 *", "network": "material", "search": "\\udfff"}', "search"),
    ('{"pgn": "1. e4 *", "network": "material", "fen": "\\ud83d"}', "fen"),
    ('{"pgn": "1. e4 *", "network": "material", "\\ud800": 1}', "\\ud800"),
])
def test_a_lone_surrogate_is_a_400(client, material_network, token, body, where):
    response = post_json(client, body, token)
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"] == ("The JSON holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not "
                                        "text; send the text as UTF-8 or as a surrogate pair.")
    assert AnalysisJob.objects.count() == 0


def test_a_surrogate_pair_is_text(client, material_network, token):
    # "\ud83d\ude00" is one character (an emoji): a PGN comment may hold it.
    response = post_json(client, '{"pgn": "1. e4 {\\ud83d\\ude00} e5 *", "network": "material", "search": "value"}',
                         token)
    assert response.status_code == 201, response.content[:300]
    assert AnalysisJob.objects.get().pgn.count("\U0001F600") == 1


@pytest.mark.parametrize("field", ["pgn", "network", "fen", "search"])
def test_the_home_form_decodes_surrogate_bytes_as_replacement_characters(client, material_network, field):
    """A form post cannot carry a lone surrogate: UTF-8's bytes for one (ED A0 80) decode to U+FFFD."""
    data = {"pgn": "1. e4 *", "network": "material", "search": "value", field: "1. e4 \udc80 *"}
    body = "&".join(f"{k}={'%ED%A0%80' if k == field else v.replace(' ', '+')}" for k, v in data.items())
    response = client.post("/", body, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400, response.content[:300]
    assert AnalysisJob.objects.count() == 0


def test_the_home_form_refuses_a_pgn_file_with_an_encoded_lone_surrogate(client, material_network):
    from django.core.files.uploadedfile import SimpleUploadedFile

    for raw in (b"\xff\xfe" + "1. e4 ".encode("utf-16-le") + b"\x00\xd8", b"1. e4 \xed\xa0\x80 *"):
        upload = SimpleUploadedFile("game.pgn", raw)
        response = client.post("/", {"pgn_file": upload, "network": "material", "search": "value"})
        assert response.status_code == 400, response.content[:300]
    assert AnalysisJob.objects.count() == 0


@pytest.mark.parametrize("extra, message", [
    ({"game_index": {}}, "game_index must be a whole number (a JSON integer)."),
    ({"budget": "2"}, "budget must be a whole number (a JSON integer)."),
    ({"budget": True}, "budget must be a whole number (a JSON integer)."),
    ({"budget": 1.5}, "budget must be a whole number (a JSON integer)."),
    ({"search": ["value"]}, "search must be a JSON string."),
    ({"network": 7}, "network must be a JSON string."),
])
def test_a_field_of_the_wrong_json_type_is_a_400(client, material_network, token, extra, message):
    """The fuzzer found these accepted (game_index: {} was ignored, budget "2" read as 2)."""
    import json

    body = {"pgn": GAME, "network": "material", "search": "alphabeta", "budget": 1, **extra}
    response = post_json(client, json.dumps(body), token)
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"] == message
    assert AnalysisJob.objects.count() == 0


@pytest.mark.parametrize("body", ["[]", '"1. e4 *"', "42", "null"])
def test_a_json_body_that_is_not_an_object_is_a_400(client, material_network, token, body):
    response = post_json(client, body, token)
    assert response.status_code == 400 and response.json()["error"].startswith("The JSON body must be an object")


def test_null_fields_count_as_not_sent(client, material_network, token):
    body = '{"pgn": "1. e4 *", "fen": null, "network": "material", "search": "value", "budget": null}'
    assert post_json(client, body, token).status_code == 201
