"""EvaluationRun becomes a job (apps/core/models.py Job): the shared fields' names, an index on status,
a started_at (empty for the stored runs). Every status it stored is a word of the shared vocabulary
already: no row changes."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('evaluation', '0003_evaluationrun_mode'),
    ]

    operations = [
        migrations.AddField(
            model_name='evaluationrun',
            name='started_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='started at'),
        ),
        migrations.AlterField(
            model_name='evaluationrun',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='requested at'),
        ),
        migrations.AlterField(
            model_name='evaluationrun',
            name='finished_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='finished at'),
        ),
        migrations.AlterField(
            model_name='evaluationrun',
            name='message',
            field=models.TextField(blank=True, verbose_name='message'),
        ),
        migrations.AlterField(
            model_name='evaluationrun',
            name='status',
            field=models.CharField(choices=[('queued', 'queued'), ('running', 'running'), ('done', 'done'), ('failed', 'failed')], db_index=True, default='queued', max_length=16, verbose_name='status'),
        ),
    ]
