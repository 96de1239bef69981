import time

from django.core.management.base import BaseCommand

from apps.graph.services.building import DEFAULTS, graph_build


class Command(BaseCommand):
    help = "Rebuild the ontology graph (features, kNN, Leiden communities) and the AGE projection from the corpus."

    def add_arguments(self, parser):
        parser.add_argument("--k", type=int, default=DEFAULTS["k"], help="neighbours per case (SIMILAR_TO)")
        parser.add_argument("--resolution", type=float, default=DEFAULTS["resolution"], help="Leiden resolution")
        parser.add_argument("--seed", type=int, default=DEFAULTS["seed"])
        parser.add_argument("--dim", type=int, default=DEFAULTS["dim"], help="ontology embedding dimension")
        parser.add_argument("--if-outdated", action="store_true",
                            help="do nothing when a graph has been built and every precedent has its features")
        parser.add_argument("--features", choices=["statistical", "llm"], default="statistical",
                            help="ontology feature extraction: the lexicon (default) or the configured LLM server")

    def handle(self, *args, k, resolution, seed, dim, if_outdated, features, **options):
        from apps.corpus.selectors import graph_current

        if if_outdated and graph_current():
            self.stdout.write("graph holds the corpus; nothing to do")
            return
        start = time.perf_counter()

        def progress(stage):
            self.stdout.write(f"  [{time.perf_counter() - start:6.1f} s] {stage}")

        extractor = None
        if features == "llm":
            from apps.judging.services import llm_client
            from worker.agents.stages.features import LLMFeatureExtractor

            extractor = LLMFeatureExtractor(llm_client(per_case_budget=False))
        build = graph_build(k=k, resolution=resolution, seed=seed, dim=dim, extractor=extractor, progress=progress)
        self.stdout.write(f"graph built in {time.perf_counter() - start:.1f} s: {build.stats['graph']}")
        c = build.stats["communities"]
        self.stdout.write(f"communities: {c['communities']} (sizes {c['sizes']}), "
                          f"cases whose community's top charge is their own: {c['top_charge_share_pct']} %")
