"""Oversized bodies against the running web server (the process ``manage.py serve`` starts).

The server must answer 413 from the headers while the client is still sending, and must
stop reading a chunked body at the limit; daphne read and parsed the whole body first.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time

import pytest

from tests.web.conftest import free_port
from webapp.site.webserver import web_server_command

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHUNK = b"x" * 65536


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = free_port()
    var_dir = tmp_path_factory.mktemp("upload-var")
    env = {**os.environ, "SIGHTLINE_VAR_DIR": str(var_dir), "DJANGO_SETTINGS_MODULE": "webapp.settings"}
    env.pop("DATABASE_URL", None)
    log = (var_dir / "web.log").open("w")
    process = subprocess.Popen(web_server_command("127.0.0.1", port), cwd=ROOT, env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 180  # importing Django and torch is slow on a loaded machine
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"the web server did not start:\n{(var_dir / 'web.log').read_text()[-2000:]}")
            time.sleep(0.2)
    yield port
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(20)


def read_response(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
        if b"\r\n\r\n" in data and b"</html>" in data:
            break
    return data


def send_until_answered(sock: socket.socket, chunk: bytes, most: int) -> tuple[int, bytes]:
    """Sends ``chunk`` repeatedly (up to ``most`` bytes) until the server answers or hangs up;
    returns how many body bytes went out and what came back."""
    sent = 0
    sock.setblocking(False)
    try:
        while sent < most:
            try:
                if sock.recv(1, socket.MSG_PEEK):
                    break
            except BlockingIOError:
                pass
            try:
                sent += sock.send(chunk)
            except BlockingIOError:
                time.sleep(0.01)  # the server is not reading: wait for its answer
            except (BrokenPipeError, ConnectionResetError):
                break
    finally:
        sock.setblocking(True)
        sock.settimeout(10)
    try:
        return sent, read_response(sock)
    except ConnectionResetError:
        return sent, b""


def test_a_declared_200_mb_body_is_refused_before_it_is_sent(server):
    size = 200 * 1024 * 1024
    with socket.create_connection(("127.0.0.1", server), timeout=10) as sock:
        sock.sendall(f"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                     f"Content-Length: {size}\r\n\r\n".encode())
        sent, answer = send_until_answered(sock, CHUNK, size)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
    assert f"The request body is {size:,} bytes; the limit here is".encode() in answer
    assert sent < 32 * 1024 * 1024, f"the client got to send {sent:,} bytes before the answer"


def test_a_chunked_body_is_read_only_up_to_the_limit(server):
    from django.conf import settings

    most = 64 * 1024 * 1024
    chunk = b"%x\r\n" % len(CHUNK) + CHUNK + b"\r\n"
    with socket.create_connection(("127.0.0.1", server), timeout=10) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        sent, answer = send_until_answered(sock, chunk, most)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
    assert b"The request body is larger than the limit" in answer
    # The limit plus what sits in socket buffers; never the whole 64 MB.
    assert sent < settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 16 * 1024 * 1024, sent


def test_a_small_body_still_reaches_the_site(server):
    with socket.create_connection(("127.0.0.1", server), timeout=10) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                     b"Content-Length: 3\r\nConnection: close\r\n\r\na=b")
        answer = read_response(sock)
    assert answer.startswith(b"HTTP/1.1 403"), answer[:300]  # Django's CSRF check: the body got through


def test_an_anonymous_2_gib_admin_upload_is_refused_before_it_is_sent(server):
    """The admin's own 403 came after the whole body was read (3.4 s for 2 GiB in the probe)."""
    size = 2 * 1024 ** 3
    with socket.create_connection(("127.0.0.1", server), timeout=10) as sock:
        sock.sendall(f"POST /admin/networks/network/add/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     f"Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: {size}\r\n\r\n".encode())
        sent, answer = send_until_answered(sock, CHUNK, size)
    assert answer.startswith(b"HTTP/1.1 403"), answer[:300]
    assert f"The request body is {size:,} bytes; only a signed-in staff user who may upload networks".encode() \
        in answer
    assert sent < 32 * 1024 * 1024, f"the client got to send {sent:,} bytes before the answer"
