"""A7: failed logins lock out a (username, address) pair, even for the right password; unknown
users get the same answers; the lock and its release are audited; an admin can unlock."""

import re

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client, override_settings

from apps.audit.models import AuditEvent
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db
LIMIT = settings.AXES_FAILURE_LIMIT
ATTACKER = "203.0.113.7"


def attempt(username, password, ip=ATTACKER, **extra):
    return Client(REMOTE_ADDR=ip, **extra).post("/accounts/login/", {"username": username, "password": password})


def fail(username, times, ip=ATTACKER, **extra):
    return [attempt(username, "wrong-password-0", ip, **extra) for _ in range(times)]


def body(response) -> str:
    # The form echoes the username back, and every page has its own nonce and CSRF token.
    text = response.content.decode().replace(response.wsgi_request.POST.get("username", ""), "USER")
    text = re.sub(r'nonce="[^"]+"', "", text)
    return re.sub(r"[A-Za-z0-9]{64}", "TOKEN", text)


def test_the_pair_is_locked_after_the_limit_even_with_the_right_password(personas):
    responses = fail("staff_a", LIMIT)
    assert [r.status_code for r in responses[:-1]] == [200] * (LIMIT - 1)
    assert responses[-1].status_code == 429
    locked = attempt("staff_a", PASSWORD)
    assert locked.status_code == 429 and "_auth_user_id" not in locked.wsgi_request.session
    assert "Too many failed logins" in locked.content.decode() or "登录失败次数过多" in locked.content.decode()
    # Another address, or another username from this address, is not locked.
    assert attempt("staff_a", PASSWORD, ip="198.51.100.9").status_code == 302
    assert attempt("staff_b", PASSWORD).status_code == 302


def test_a_good_login_below_the_limit_clears_the_count(personas):
    fail("staff_a", LIMIT - 1)
    assert attempt("staff_a", PASSWORD).status_code == 302
    fail("staff_a", LIMIT - 1)
    assert attempt("staff_a", PASSWORD).status_code == 302


def test_unknown_users_and_bad_passwords_get_the_same_answers(personas):
    known, unknown = fail("staff_a", LIMIT), fail("nobody-here", LIMIT)
    for a, b in zip(known, unknown):
        assert a.status_code == b.status_code
        assert body(a) == body(b)


def test_the_lock_is_audited_once_and_an_admin_unlock_too(personas):
    fail("staff_a", LIMIT + 2)
    locks = AuditEvent.objects.filter(action="accounts.login_locked_out")
    assert locks.count() == 1
    lock = locks.get()
    assert lock.object_id == "staff_a" and lock.after["ip"] == ATTACKER and lock.ip == ATTACKER

    admin = personas.client(personas.admin)
    attempt_row = AccessAttempt.objects.get(username="staff_a")
    response = admin.post(f"/admin/axes/accessattempt/{attempt_row.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    unlock = AuditEvent.objects.get(action="accounts.login_unlocked")
    assert unlock.actor_username == "admin" and unlock.before["username"] == "staff_a"
    assert attempt("staff_a", PASSWORD).status_code == 302


def test_a_spoofed_forwarded_for_from_an_untrusted_peer_is_ignored(personas):
    # Rotating X-Forwarded-For does not spread the failures over many "addresses".
    for n in range(LIMIT):
        attempt("staff_a", "wrong-password-0", HTTP_X_FORWARDED_FOR=f"10.0.0.{n}")
    assert attempt("staff_a", PASSWORD, HTTP_X_FORWARDED_FOR="10.9.9.9").status_code == 429


@override_settings(TRUSTED_PROXIES=["127.0.0.1"])
def test_behind_a_trusted_proxy_the_forwarded_client_is_locked_not_the_proxy(personas):
    fail("staff_a", LIMIT, ip="127.0.0.1", HTTP_X_FORWARDED_FOR=f"1.1.1.1, {ATTACKER}")
    assert attempt("staff_a", PASSWORD, ip="127.0.0.1", HTTP_X_FORWARDED_FOR=ATTACKER).status_code == 429
    # Another client behind the same proxy can still log in.
    assert attempt("staff_a", PASSWORD, ip="127.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.20").status_code == 302
