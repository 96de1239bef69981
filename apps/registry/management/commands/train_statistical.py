from django.core.management.base import BaseCommand

from apps.registry.services import statistical_models_train


class Command(BaseCommand):
    help = ("Train the statistical models (charges, articles, term; with --statutes and --checklists also the "
            "checklist verifier and the intent classifier) on JSONL files and activate them.")

    def add_arguments(self, parser):
        parser.add_argument("--cases", required=True, help="cases JSONL in the ../shared/data schema")
        parser.add_argument("--statutes", help="statutes JSONL (for the verifier and the intent classifier)")
        parser.add_argument("--checklists", help="checklists JSONL (for the verifier)")
        parser.add_argument("--out", help="artefact directory (default: a new one under MEDIA_ROOT/models)")
        parser.add_argument("--if-missing", action="store_true", help="do nothing when every kind has an active model")

    def handle(self, *args, cases, statutes, checklists, out, if_missing, **options):
        from apps.registry.models import ModelVersion

        wanted = set(ModelVersion.Kind.values) if statutes and checklists else {"charges", "articles", "term"}
        if if_missing and wanted <= set(ModelVersion.objects.filter(active=True).values_list("kind", flat=True)):
            self.stdout.write("statistical models present; nothing to do")
            return
        for kind, version in statistical_models_train(cases=cases, out=out, statutes=statutes, checklists=checklists).items():
            self.stdout.write(f"{kind}: {version.model_id} active; primary metric "
                              f"{version.metrics.get('primary_metric')} = {version.metrics.get(version.metrics.get('primary_metric'))}")
