from django.contrib.auth.models import AbstractUser
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils.translation import gettext_lazy as _


class Role(models.TextChoices):
    STAFF = "staff", _("Staff")
    REVIEWER = "reviewer", _("Reviewer")
    ADMIN = "admin", _("Administrator")


class Team(models.Model):
    """A matter group. Every case belongs to one team; users see only their teams' work."""

    name = models.CharField(_("name"), max_length=120, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class User(AbstractUser):
    # A user may hold several roles (a senior lawyer can be staff and reviewer);
    # four-eyes rules are enforced per object, not by keeping roles disjoint.
    roles = ArrayField(models.CharField(max_length=16, choices=Role.choices), default=list, blank=True)
    teams = models.ManyToManyField(Team, related_name="members", blank=True)

    def has_role(self, role: str) -> bool:
        return self.is_active and role in self.roles

    @property
    def role_labels(self) -> list[str]:
        return [Role(r).label for r in self.roles if r in Role.values]


class ApiToken(models.Model):
    """A named, expiring, revocable credential for the REST API (apps/cases/services/api_tokens.py).

    Only the SHA-256 of the secret is stored: the secret is shown once, when minted. SHA-256 and
    not a slow password hash because the secret is 32 random bytes, not something a person chose;
    nobody can guess it from its hash. ``prefix`` (the first characters) names the token in lists.
    A read-only token may only read; a token stops working when it expires, is revoked, its user is
    deactivated, or its user gained a role it was not issued for.
    """

    class Scope(models.TextChoices):
        READ = "read", _("read only")
        WRITE = "write", _("read and write")

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens", verbose_name=_("user"))
    name = models.CharField(_("name"), max_length=100)
    prefix = models.CharField(_("token"), max_length=16)
    key_hash = models.CharField(max_length=64, unique=True)
    scope = models.CharField(_("scope"), max_length=8, choices=Scope.choices)
    # The user's roles when the token was issued: a token never carries a role granted later.
    roles = ArrayField(models.CharField(max_length=16), default=list, blank=True)
    created_by = models.ForeignKey(User, null=True, on_delete=models.SET_NULL, related_name="+",
                                   verbose_name=_("issued by"))
    created_at = models.DateTimeField(_("issued at"), auto_now_add=True)
    expires_at = models.DateTimeField(_("expires at"))
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)
    revoked_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                                   verbose_name=_("revoked by"))

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [models.CheckConstraint(condition=models.Q(scope__in=["read", "write"]), name="api_token_scope")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def state(self, now=None) -> str:
        from django.utils import timezone

        if self.revoked_at is not None:
            return "revoked"
        return "expired" if self.expires_at <= (now or timezone.now()) else "active"
