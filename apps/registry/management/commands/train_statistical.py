from django.core.management.base import BaseCommand

from apps.registry.services import statistical_models_train


class Command(BaseCommand):
    help = "Train the statistical models (charges, articles, term) on a cases JSONL file and activate them."

    def add_arguments(self, parser):
        parser.add_argument("--cases", required=True, help="cases JSONL in the ../shared/data schema")
        parser.add_argument("--out", help="artefact directory (default: a new one under MEDIA_ROOT/models)")
        parser.add_argument("--if-missing", action="store_true", help="do nothing when every kind has an active model")

    def handle(self, *args, cases, out, if_missing, **options):
        from apps.registry.models import ModelVersion

        if if_missing and ModelVersion.objects.filter(active=True).count() == len(ModelVersion.Kind):
            self.stdout.write("statistical models present; nothing to do")
            return
        for kind, version in statistical_models_train(cases=cases, out=out).items():
            self.stdout.write(f"{kind}: {version.model_id} active; metrics {version.metrics}")
