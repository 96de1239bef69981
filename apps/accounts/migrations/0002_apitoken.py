import django.contrib.postgres.fields
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    """Hashed, named, expiring API tokens replace rest_framework.authtoken, whose table held every
    token in clear text; it is dropped where an earlier version created it."""

    dependencies = [("accounts", "0001_initial")]

    operations = [
        migrations.CreateModel(
            name="ApiToken",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100, verbose_name="name")),
                ("prefix", models.CharField(max_length=16, verbose_name="token")),
                ("key_hash", models.CharField(max_length=64, unique=True)),
                ("scope", models.CharField(choices=[("read", "read only"), ("write", "read and write")], max_length=8,
                                           verbose_name="scope")),
                ("roles", django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=16),
                                                                    blank=True, default=list, size=None)),
                ("created_at", models.DateTimeField(auto_now_add=True, verbose_name="issued at")),
                ("expires_at", models.DateTimeField(verbose_name="expires at")),
                ("last_used_at", models.DateTimeField(blank=True, null=True, verbose_name="last used")),
                ("revoked_at", models.DateTimeField(blank=True, null=True, verbose_name="revoked at")),
                ("created_by", models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL,
                                                 related_name="+", to=settings.AUTH_USER_MODEL,
                                                 verbose_name="issued by")),
                ("revoked_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                                 related_name="+", to=settings.AUTH_USER_MODEL,
                                                 verbose_name="revoked by")),
                ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="api_tokens",
                                           to=settings.AUTH_USER_MODEL, verbose_name="user")),
            ],
            options={
                "ordering": ["-created_at", "-pk"],
                "constraints": [models.CheckConstraint(condition=models.Q(("scope__in", ["read", "write"])),
                                                       name="api_token_scope")],
            },
        ),
        migrations.RunSQL("DROP TABLE IF EXISTS authtoken_token", migrations.RunSQL.noop),
    ]
