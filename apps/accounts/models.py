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
