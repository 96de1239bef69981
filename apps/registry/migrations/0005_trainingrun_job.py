"""TrainingRun becomes a job (apps/core/models.py Job): the shared fields' names and an index on status.
Every status it stored is a word of the shared vocabulary already: no row changes."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('registry', '0004_auditor_kind'),
    ]

    operations = [
        migrations.AlterField(
            model_name='trainingrun',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='requested at'),
        ),
        migrations.AlterField(
            model_name='trainingrun',
            name='finished_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='finished at'),
        ),
        migrations.AlterField(
            model_name='trainingrun',
            name='message',
            field=models.TextField(blank=True, verbose_name='message'),
        ),
        migrations.AlterField(
            model_name='trainingrun',
            name='started_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='started at'),
        ),
        migrations.AlterField(
            model_name='trainingrun',
            name='status',
            field=models.CharField(choices=[('queued', 'queued'), ('running', 'running'), ('promoted', 'promoted'), ('rejected', 'rejected by the gate'), ('failed', 'failed')], db_index=True, default='queued', max_length=16, verbose_name='status'),
        ),
    ]
