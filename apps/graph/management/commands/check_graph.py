from django.core.management.base import BaseCommand, CommandError

from apps.graph.services.projection import expected_counts, graph_consistency


class Command(BaseCommand):
    help = "Compare the AGE graph with the relational tables it mirrors (counts per label). Exit 1 on drift."

    def handle(self, *args, **options):
        drift = graph_consistency()
        for label, n in expected_counts().items():
            mark = "DRIFT" if label in drift else "ok"
            graph_n = drift[label][1] if label in drift else n
            self.stdout.write(f"{label:<16} tables {n:>8}  graph {graph_n:>8}  {mark}")
        if drift:
            raise CommandError(f"the graph is out of step with the tables for: {', '.join(sorted(drift))}")
