"""Administrators manage users, teams, roles and memberships in the Django admin (issue 21, point 7).
Before, every model page answered 403 to `admin`: is_staff, but no Django model permission. Every
change is audited; superuser powers stay hidden; an administrator cannot lock themselves out."""

import pytest
from django.urls import reverse

from apps.accounts.models import Role, Team, User
from apps.audit.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_an_administrator_opens_the_user_and_team_pages(personas):
    client = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en")
    for url in (reverse("admin:accounts_user_changelist"), reverse("admin:accounts_team_changelist"),
                reverse("admin:accounts_user_change", args=[personas.staff_a.pk]),
                reverse("admin:accounts_team_change", args=[personas.team_a.pk]), reverse("admin:accounts_user_add")):
        assert client.get(url).status_code == 200, url
    change = client.get(reverse("admin:accounts_user_change", args=[personas.staff_a.pk])).content.decode()
    assert 'name="roles"' in change and 'name="teams"' in change
    assert 'name="is_superuser"' not in change and 'name="user_permissions"' not in change


@pytest.mark.parametrize("who", ["staff_a", "reviewer"])
def test_nobody_else_does(personas, who):
    client = personas.client(getattr(personas, who))
    assert client.get(reverse("admin:accounts_user_changelist")).status_code in (302, 403)


def test_roles_and_memberships_are_changed_and_audited(personas):
    client = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en")
    user = personas.staff_a
    form = {"username": user.username, "first_name": "Clerk", "last_name": "A", "email": "", "roles": ["staff", "reviewer"],
            "teams": [personas.team_a.pk, personas.team_b.pk], "is_active": "on",
            "last_login_0": "", "last_login_1": "", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"}
    response = client.post(reverse("admin:accounts_user_change", args=[user.pk]), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    user.refresh_from_db()
    assert sorted(user.roles) == ["reviewer", "staff"] and user.teams.count() == 2 and not user.is_staff
    event = AuditEvent.objects.filter(action="accounts.user_update", object_id=str(user.pk)).get()
    assert event.actor_username == "admin" and event.before["roles"] == ["staff"]
    assert event.after["roles"] == ["reviewer", "staff"] and len(event.after["teams"]) == 2
    assert "password" not in str(event.after)
    # A team's members, from the team's side.
    team = Team.objects.create(name="Team C")
    client.post(reverse("admin:accounts_team_change", args=[team.pk]),
                {"name": "Team C · 刑事三庭", "members": [personas.reviewer.pk]})
    team.refresh_from_db()
    assert team.name == "Team C · 刑事三庭" and list(team.members.all()) == [personas.reviewer]
    assert AuditEvent.objects.filter(action="accounts.team_update", object_id=str(team.pk)).exists()


def test_a_new_user_is_created_audited_and_made_staff_by_the_admin_role(personas):
    client = personas.client(personas.admin)
    response = client.post(reverse("admin:accounts_user_add"), {"username": "clerk_c", "password1": "a-long-password-9",
                                                                "password2": "a-long-password-9", "usable_password": "true"})
    assert response.status_code == 302
    new = User.objects.get(username="clerk_c")
    assert AuditEvent.objects.filter(action="accounts.user_create", object_id=str(new.pk)).exists()
    form = {"username": "clerk_c", "first_name": "", "last_name": "", "email": "", "roles": ["admin"], "is_active": "on",
            "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"}
    client.post(reverse("admin:accounts_user_change", args=[new.pk]), form)
    new.refresh_from_db()
    assert new.roles == [Role.ADMIN] and new.is_staff, "the admin role opens the admin site"


def test_an_administrator_cannot_take_their_own_administration_away(personas):
    client = personas.client(personas.admin, HTTP_ACCEPT_LANGUAGE="en")
    admin = personas.admin
    form = {"username": admin.username, "first_name": "", "last_name": "", "email": "", "roles": ["staff"],
            "is_active": "on", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"}
    page = client.post(reverse("admin:accounts_user_change", args=[admin.pk]), form)
    assert page.status_code == 200 and "cannot remove your own administrator role" in page.content.decode()
    admin.refresh_from_db()
    assert admin.roles == [Role.ADMIN]
    assert client.get(reverse("admin:accounts_user_delete", args=[admin.pk])).status_code == 403
