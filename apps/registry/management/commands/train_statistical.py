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
        parser.add_argument("--if-outdated", action="store_true",
                            help="do nothing when every kind has an active model trained after the corpus last changed")
        parser.add_argument("--no-dev-split", action="store_true",
                            help="hold out a 10 %% hash split instead of the development split (a small corpus such as the demo's)")
        parser.add_argument("--no-auditor", action="store_true", help="skip the learned Auditor (its training runs the pipeline)")
        parser.add_argument("--auditor-per-charge", type=int, default=None, metavar="N",
                            help="training cases per charge for the Auditor's rows (default 40; fewer is faster)")
        parser.add_argument("--workers", type=int, default=1, help="processes for the Auditor's training rows (default 1)")

    def handle(self, *args, cases, statutes, checklists, out, if_outdated, no_dev_split=False, no_auditor=False,
               workers=1, auditor_per_charge=None, **options):
        from apps.registry.selectors import models_current

        if if_outdated and models_current():
            self.stdout.write("statistical models are trained on the current corpus; nothing to do")
            return
        trained = statistical_models_train(cases=cases, out=out, statutes=statutes, checklists=checklists,
                                           extra_args=["--no-dev-split"] if no_dev_split else [], auditor=not no_auditor,
                                           auditor_workers=workers, auditor_per_charge=auditor_per_charge)
        for kind, version in trained.items():
            self.stdout.write(f"{kind}: {version.model_id} active; primary metric "
                              f"{version.metrics.get('primary_metric')} = {version.metrics.get(version.metrics.get('primary_metric'))}")
