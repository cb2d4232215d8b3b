"""The websocket consumer: a job group per analysis, pushed plies, late joiners catch up."""

import json
import uuid

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from tests.web.conftest import SHORT_GAME
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import job_group_name
from webapp.jobs.live.publish import GroupPublisher, encode
from webapp.jobs.live.routing import websocket_urlpatterns
from webapp.jobs.run.runner import JobRun

pytestmark = pytest.mark.django_db(transaction=True)

APP = URLRouter(websocket_urlpatterns)


def communicator(job_id) -> WebsocketCommunicator:
    return WebsocketCommunicator(APP, f"/ws/jobs/{job_id}/")


def test_consumer_receives_per_ply_messages_and_late_joiner_catches_up(material_network):
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)

    async def scenario():
        early = communicator(job.id)
        connected, _ = await early.connect()
        assert connected
        snapshot = await early.receive_json_from()
        assert snapshot["kind"] == "snapshot" and snapshot["job"]["status"] == "queued" and snapshot["results"] == {}

        # A second viewer of the same job gets the same pushes.
        second = communicator(job.id)
        assert (await second.connect())[0]
        await second.receive_json_from()

        from channels.db import database_sync_to_async

        await database_sync_to_async(lambda: JobRun(job, _material(), GroupPublisher(job.id)).run())()
        received = []
        while True:
            message = await early.receive_json_from(timeout=2)
            received.append(message)
            if message["kind"] == "status" and message["status"] == "done":
                break
        plies = [m for m in received if m["kind"] == "ply"]
        evals = [item for m in received if m["kind"] == "plies" for item in m["items"]]
        assert len(plies) == 9 and {m["node"] for m in plies} == set(range(9))
        assert [e["node"] for e in evals] == list(range(9)) and all("eval" in e for e in evals)
        assert all("sent_at_ms" in m for m in received)
        second_got = []
        while True:
            message = await second.receive_json_from(timeout=2)
            second_got.append(message)
            if message["kind"] == "status" and message["status"] == "done":
                break
        assert second_got == received

        # A viewer connecting after the work is done gets everything from the database.
        late = communicator(job.id)
        assert (await late.connect())[0]
        caught_up = await late.receive_json_from()
        assert caught_up["kind"] == "snapshot" and caught_up["job"]["status"] == "done"
        assert sorted(map(int, caught_up["results"])) == list(range(9))
        assert all({"eval", "search"} <= set(r) for r in caught_up["results"].values())
        assert await late.receive_nothing(timeout=0.2)
        for c in (early, second, late):
            await c.disconnect()

    async_to_sync(scenario)()


def _material():
    from analysis.evaluator import MaterialEvaluator

    return MaterialEvaluator()


def test_group_messages_reach_only_that_jobs_viewers(material_network):
    one = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)
    two = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)

    async def scenario():
        a, b = communicator(one.id), communicator(two.id)
        for c in (a, b):
            assert (await c.connect())[0]
            await c.receive_json_from()
        layer = get_channel_layer()
        await layer.group_send(job_group_name(one.id), encode("progress", {"node": 3, "nodes": 120, "nps": 900}))
        message = await a.receive_json_from()
        assert message.pop("sent_at_ms") > 0
        assert message == {"kind": "progress", "node": 3, "nodes": 120, "nps": 900}
        assert await b.receive_nothing(timeout=0.2)
        await a.send_json_to({"kind": "ping", "t": 5})
        assert await a.receive_json_from() == {"kind": "pong", "t": 5}
        await a.disconnect()
        await b.disconnect()

    async_to_sync(scenario)()


@pytest.mark.parametrize("job_id", [str(uuid.uuid4()), "not-a-uuid"])
def test_unknown_job_is_closed_with_4404(job_id):
    # Once refused at the handshake (HTTP 403), so the page never saw the code.
    async def scenario():
        c = communicator(job_id)
        connected, _ = await c.connect()
        assert connected
        assert await c.receive_output() == {"type": "websocket.close", "code": 4404, "reason": "no such analysis"}

    async_to_sync(scenario)()


@pytest.mark.parametrize("frame, code, error", [
    ({"bytes": b"\x00\x01"}, 4400, "binary frames are not accepted"),
    ({"text": "{not json"}, 4400, "the message is not JSON"),
    ({"text": "[" * 100_000 + "]" * 100_000}, 4413, "messages are limited to 1024 characters"),
    ({"text": '{"kind": "ping", "t": "' + "x" * 1_000_000 + '"}'}, 4413, "limited to 1024 characters"),
])
def test_junk_frames_close_with_a_reason_not_a_server_error(material_network, frame, code, error):
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)

    async def scenario():
        c = communicator(job.id)
        assert (await c.connect())[0]
        await c.receive_json_from()  # the snapshot
        await c.send_input({"type": "websocket.receive", **frame})
        message = await c.receive_json_from()
        assert message["kind"] == "error" and error in message["error"]
        closed = await c.receive_output()  # re-raises anything the consumer raised
        assert closed["type"] == "websocket.close" and closed["code"] == code

    async_to_sync(scenario)()


@pytest.mark.parametrize("content, error", [
    ({"kind": "ping", "t": "x" * 65}, "at most 64 characters"),
    ({"kind": "ping", "t": {"nested": [1, 2]}}, "must be a number or a string"),
    ({"kind": "subscribe"}, "the only message accepted is"),
    ([1, 2, 3], "the only message accepted is"),
    (json.loads("[" * 500 + "]" * 500), "the only message accepted is"),  # as deep as 1024 characters go
])
def test_pings_echo_only_small_tokens_and_other_messages_get_an_error(material_network, content, error):
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)

    async def scenario():
        c = communicator(job.id)
        assert (await c.connect())[0]
        await c.receive_json_from()
        await c.send_json_to(content)
        reply = await c.receive_json_from()
        assert reply["kind"] == "error" and error in reply["error"]
        await c.send_json_to({"kind": "ping", "t": "still here"})  # the socket stays open
        assert await c.receive_json_from() == {"kind": "pong", "t": "still here"}
        await c.disconnect()

    async_to_sync(scenario)()
