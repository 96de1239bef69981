"""G1: an oversized upload is refused from its declared size, before the body is read.

In-process for the middleware's decisions, and over loopback against gunicorn: a
client announces 200 MB, sends 256 KB and gets 413 at once, and no temporary
file appears in the server's TMPDIR. 101 files and 1001 fields get 400 there too.
"""

import os
import socket
import time

import pytest
from django.conf import settings

from tests.faults import Gunicorn

TOO_BIG = 200 * 1024 * 1024


@pytest.mark.django_db
def test_a_declared_body_over_the_limit_is_refused_before_the_view(personas):
    client = personas.client(personas.admin)
    over = settings.LEXTRACE_MAX_REQUEST_BODY_BYTES + 1
    response = client.post("/corpus/imports/", data=b"x", content_type="application/octet-stream", CONTENT_LENGTH=str(over))
    assert response.status_code == 413 and response["Connection"] == "close"
    assert b"Traceback" not in response.content
    garbled = client.post("/corpus/imports/", data=b"x", content_type="application/octet-stream", CONTENT_LENGTH="-5")
    assert garbled.status_code == 400
    # Within the limit the request goes on to the view (here: the form refuses a body that is no form).
    assert client.post("/corpus/imports/", data={}).status_code == 200


def _raw_post(port: int, path: str, headers: dict[str, str], body_prefix: bytes, timeout: float = 20) -> tuple[str, float]:
    """Send the headers and only ``body_prefix`` of the announced body; return the status line and seconds."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        head = f"POST {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        sock.sendall(head.encode())
        try:
            sock.sendall(body_prefix)
        except OSError:
            pass  # the server may already have answered and closed
        reply = b""
        while b"\r\n" not in reply:
            chunk = sock.recv(4096)
            if not chunk:
                break
            reply += chunk
    return reply.split(b"\r\n", 1)[0].decode(errors="replace"), time.monotonic() - started


def _multipart(parts: list[tuple[str, str | None, bytes]]) -> tuple[str, bytes]:
    boundary = "lextrace-test-boundary"
    body = b""
    for name, filename, data in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        body += f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + data + b"\r\n"
    return f"multipart/form-data; boundary={boundary}", body + f"--{boundary}--\r\n".encode()


@pytest.mark.c
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_g1_gunicorn_refuses_an_announced_200_mb_body_at_once_and_leaves_no_temporary_file(tmp_path):
    from django.db import connection

    from tests.conftest import api_token_for

    from apps.accounts.models import Role, Team
    from apps.accounts.services import user_create

    team = Team.objects.create(name="G1 team")
    token = api_token_for(user_create(username="g1_staff", password="g1-password-123",
                                                  roles=[Role.STAFF], teams=[team]))
    tmp = tmp_path / "server-tmp"
    tmp.mkdir()
    env = {"DB_NAME": connection.settings_dict["NAME"], "TMPDIR": str(tmp)}
    with Gunicorn(env) as server:
        headers = {"Host": "127.0.0.1", "Content-Type": "multipart/form-data; boundary=x",
                   "Content-Length": str(TOO_BIG)}
        status, seconds = _raw_post(server.port, "/corpus/imports/", headers, b"\0" * (256 * 1024))
        assert status.split()[1] == "413", status
        assert seconds < 10, seconds  # answered without waiting for the 200 MB that never came

        for parts in ([("f", f"{i}.txt", b"x") for i in range(101)], [(f"k{i}", None, b"v") for i in range(1001)]):
            content_type, body = _multipart(parts)
            status, _s = _raw_post(server.port, "/api/v1/cases/", {
                "Host": "127.0.0.1", "Authorization": f"Token {token}", "Content-Type": content_type,
                "Content-Length": str(len(body))}, body)
            assert status.split()[1] == "400", status  # too many files / fields, refused while parsing
    leftovers = [p for p in tmp.rglob("*") if p.is_file()]
    assert leftovers == [], leftovers
