"""ImportBatch becomes a job (apps/core/models.py Job): the shared fields' names, an index on status,
a started_at (empty for the stored batches). Every status it stored is a word of the shared vocabulary
already: no row changes."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('corpus', '0003_import_formats'),
    ]

    operations = [
        migrations.AddField(
            model_name='importbatch',
            name='started_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='started at'),
        ),
        migrations.AlterField(
            model_name='importbatch',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='requested at'),
        ),
        migrations.AlterField(
            model_name='importbatch',
            name='finished_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='finished at'),
        ),
        migrations.AlterField(
            model_name='importbatch',
            name='status',
            field=models.CharField(choices=[('queued', 'queued'), ('running', 'running'), ('checked', 'checked: awaiting confirmation'), ('published', 'published'), ('duplicate', 'identical to an earlier import'), ('failed', 'failed'), ('discarded', 'discarded')], db_index=True, default='queued', max_length=16, verbose_name='status'),
        ),
    ]
