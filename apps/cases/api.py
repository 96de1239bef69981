"""REST API for cases and runs: one view per operation, input and output serializers beside it.

Team scoping is the web pages' own (apps.cases.selectors): another team's
case or run is a 404. Reads need a login (session or token); writes need the
staff role. Starting runs has its own throttle scope ("runs").
"""

import time

from django.core.cache import cache
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Prefetch, prefetch_related_objects
from django.utils.cache import get_conditional_response, patch_cache_control
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle, UserRateThrottle
from rest_framework.views import APIView

from apps.accounts.models import Role, Team
from apps.accounts.selectors import team_list_for
from apps.cases.models import MAX_DEFENDANTS, TERM_KIND, Case, DefendantResult, JudgmentRun, RunAttempt
from apps.cases.selectors import CASE_STATUS_NONE, case_get_for, case_search, run_get_for, run_progress
from apps.cases.evidence import term_label
from apps.cases.selectors import run_bundle_etag
from apps.cases.services.cases import CaseConflict
from apps.cases.services.idempotency import (
    KEY_MAX_LENGTH,
    IdempotencyConflict,
    IdempotencyMismatch,
    fingerprint,
    idempotent_create,
)
from apps.cases.services.intake import IntakeUnconfirmed, case_findings, case_intake, case_revise, statute_coverage
from apps.cases.services.runs import judgment_cancel, judgment_request, judgment_retry
from worker.agents.names import ABLATIONS

# --- policy --------------------------------------------------------------------------


class _RatesFromSettings:
    """Read the rate when a request comes, not at import, so a changed setting takes effect."""

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class _OneAtATime:
    """DRF's throttle reads a user's request history from the cache, decides, and writes it back: two requests of
    one user at the same moment both read the old history and both pass (tests/ops/test_load.py saw 21 runs
    accepted at 2 an hour for 10 users). The check and the record are made under a short lock per user and
    throttle, taken in the shared cache; a lock not released within LOCK_SECONDS expires, and a request that
    cannot take it by then is decided without it rather than kept waiting."""

    LOCK_SECONDS = 2

    def allow_request(self, request, view):
        user = getattr(request, "user", None)
        who = f"user:{user.pk}" if user is not None and user.is_authenticated else f"ip:{self.get_ident(request)}"
        lock = f"throttle-lock:{type(self).__name__}:{who}"
        deadline = time.monotonic() + self.LOCK_SECONDS
        held = False
        try:
            while not (held := cache.add(lock, 1, timeout=self.LOCK_SECONDS)) and time.monotonic() < deadline:
                time.sleep(0.005)
        except Exception:  # noqa: BLE001 - the cache is down: DRF's own read of it decides what happens
            held = False
        try:
            return super().allow_request(request, view)
        finally:
            if held:
                cache.delete(lock)


class UserThrottle(_OneAtATime, _RatesFromSettings, UserRateThrottle):
    pass


class RunThrottle(_OneAtATime, _RatesFromSettings, ScopedRateThrottle):
    pass


class StaffWrites(permissions.BasePermission):
    """Anyone logged in may read (their teams' objects); only staff may write."""

    def has_permission(self, request, view):
        if request.method in permissions.SAFE_METHODS:
            return True
        return request.user.has_role(Role.STAFF)


class _Api(APIView):
    permission_classes = [permissions.IsAuthenticated, StaffWrites]
    throttle_classes = [UserThrottle, RunThrottle]


class Pagination(PageNumberPagination):
    page_size = 25


def _unconfirmed(exc: IntakeUnconfirmed) -> ValidationError:
    errors = {f.field: [f.message] for f in exc.findings}
    errors["needs_confirmation"] = [f.code for f in exc.findings]
    return ValidationError(errors)


def _service_errors(exc: DjangoValidationError) -> ValidationError:
    if hasattr(exc, "error_dict"):
        return ValidationError({field: [str(m) for e in errors for m in e.messages]
                                for field, errors in exc.error_dict.items()})
    return ValidationError({"non_field_errors": exc.messages})


# --- serializers shared by several operations -------------------------------------------------


class FindingSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="defendant_absent, before_coverage or not_chinese")
    field = serializers.CharField()
    message = serializers.CharField()


class CaseSerializer(serializers.ModelSerializer):
    team_name = serializers.CharField(source="team.name", read_only=True)
    defendants = serializers.ListField(child=serializers.CharField())
    warnings = serializers.SerializerMethodField(help_text="what the clerk should know before running the case")

    class Meta:
        model = Case
        fields = ["id", "team", "team_name", "title", "facts", "offence_date", "defendants", "version", "upload",
                  "warnings", "created_at", "updated_at"]

    @extend_schema_field(FindingSerializer(many=True))
    def get_warnings(self, case):
        # The statutes' coverage is the same for every case of a listing: read once per serialisation.
        if "coverage" not in self.context:
            self.context["coverage"] = statute_coverage()
        return [{"code": f.code, "field": f.field, "message": f.message}
                for f in case_findings(case, coverage=self.context["coverage"])]


class TermSerializer(serializers.Serializer):
    months = serializers.IntegerField(allow_null=True)
    life = serializers.BooleanField()
    death = serializers.BooleanField()
    kind = serializers.CharField(
        allow_null=True, required=False,
        help_text='"detention" (拘役) when the articles provide nothing heavier; null: by its length')


class ResultSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    defendant = serializers.CharField()
    status = serializers.CharField(
        help_text="'judged', or an explicit failure state (no_evidence, insufficient_evidence, ...)")
    message = serializers.CharField()
    charges = serializers.ListField(child=serializers.CharField())
    article_keys = serializers.ListField(child=serializers.CharField())
    term = serializers.SerializerMethodField()
    term_text = serializers.SerializerMethodField(help_text="the term as a judgment writes it (有期徒刑一年五个月)")

    @extend_schema_field(TermSerializer)
    def get_term(self, result):
        return {"months": result.term_months, "life": result.life, "death": result.death, "kind": result.term_kind}

    def get_term_text(self, result) -> str:
        return term_label(result.term_months, result.life, result.death, result.term_kind) if result.judged else ""


class ReviewedResultSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    changed = serializers.BooleanField(help_text="the reviewer's overrides changed this defendant's outcome")
    overrides = serializers.IntegerField()
    status = serializers.CharField()
    charges = serializers.ListField(child=serializers.CharField())
    article_keys = serializers.ListField(child=serializers.CharField())
    term = TermSerializer(allow_null=True)
    term_text = serializers.CharField()


class RunReviewSerializer(serializers.Serializer):
    status = serializers.CharField(help_text="pending, approved, rejected or returned")
    decision = serializers.CharField(allow_null=True, help_text="approve, reject or return; null while pending")
    reason = serializers.CharField(allow_blank=True)
    reviewer = serializers.CharField(allow_null=True)
    decided_at = serializers.DateTimeField(allow_null=True)
    results = ReviewedResultSerializer(many=True, help_text="the reviewed outcome per defendant, once decided")


def run_review_out(run, review: dict | None) -> dict | None:
    """The review of a run for the API: status, the standing decision and the reviewed outcome per
    defendant (the machine's own when the reviewer changed nothing)."""
    if run.status != JudgmentRun.Status.DONE:
        return None
    if review is None:
        return {"status": "pending", "decision": None, "reason": "", "reviewer": None, "decided_at": None, "results": []}
    decision = review["decision"]
    results = []
    if decision is not None:
        for r in run.results.all():
            changed = review["results"].get(r.pk, {})
            if changed.get("changed"):
                row = {k: changed[k] for k in ("status", "charges", "article_keys", "term", "term_text")}
            else:
                row = {"status": r.status, "charges": list(r.charges), "article_keys": list(r.article_keys),
                       "term": {"months": r.term_months, "life": r.life, "death": r.death, "kind": r.term_kind}
                       if r.judged else None,
                       "term_text": term_label(r.term_months, r.life, r.death, r.term_kind) if r.judged else ""}
            results.append({"position": r.position, "changed": bool(changed.get("changed")),
                            "overrides": changed.get("overrides", 0), **row})
    return {"status": review["status"], "decision": decision.kind if decision else None,
            "reason": decision.reason if decision else "",
            "reviewer": decision.reviewer.username if decision else None,
            "decided_at": decision.decided_at if decision else None, "results": results}


class AttemptSerializer(serializers.ModelSerializer):
    class Meta:
        model = RunAttempt
        fields = ["number", "status", "worker", "started_at", "heartbeat_at", "finished_at", "message"]


class ProgressSerializer(serializers.Serializer):
    defendant = serializers.CharField()
    stage = serializers.CharField(
        help_text="the stage reached: focus, features, prejudge, researcher, auditor, adjudicator")
    finished = serializers.BooleanField()
    done = serializers.IntegerField(help_text="articles audited")
    total = serializers.IntegerField(help_text="candidate articles to audit")
    passed = serializers.IntegerField(help_text="audited articles that passed")
    planner_steps = serializers.IntegerField(help_text="steps of the agentic planner so far (0 in the fixed mode)")


class RunSerializer(serializers.ModelSerializer):
    defendants = serializers.ListField(child=serializers.CharField())
    progress = serializers.SerializerMethodField()
    results = ResultSerializer(many=True, read_only=True)
    attempts = AttemptSerializer(many=True, read_only=True)
    review = serializers.SerializerMethodField(
        help_text="null until the run is done; then its review status and, once decided, the reviewed outcome")

    class Meta:
        model = JudgmentRun
        fields = ["id", "case", "status", "message", "strategy", "ablation", "mode", "case_version", "defendants",
                  "offence_date", "attempt_count", "cancel_requested", "retry_of", "versions", "created_at",
                  "started_at", "finished_at", "progress", "attempts", "results", "review"]

    @extend_schema_field(ProgressSerializer(many=True))
    def get_progress(self, run):
        return ProgressSerializer(run_progress(run=run), many=True).data

    @extend_schema_field(RunReviewSerializer(allow_null=True))
    def get_review(self, run):
        from apps.review.selectors import review_outcomes

        reviews = self.context.get("reviews")
        review = reviews.get(run.pk) if reviews is not None else review_outcomes([run.pk]).get(run.pk)
        out = run_review_out(run, review)
        return RunReviewSerializer(out).data if out is not None else None


# The bundles are fetched by RunBundleApi only; run listings leave them in the database.
_RESULTS = Prefetch("results", queryset=DefendantResult.objects.defer("bundle").annotate(kind=TERM_KIND))


def _run_out(run: JudgmentRun) -> dict:
    run = JudgmentRun.objects.prefetch_related(_RESULTS, "attempts").get(pk=run.pk)
    return RunSerializer(run).data


# --- cases -----------------------------------------------------------------------------------


class CaseListCreateApi(_Api):
    class CaseFilterInput(serializers.Serializer):
        q = serializers.CharField(required=False, allow_blank=True, max_length=200)
        status = serializers.ChoiceField(choices=[CASE_STATUS_NONE, *JudgmentRun.Status.values], required=False)
        charge = serializers.CharField(required=False, allow_blank=True, max_length=100)
        team = serializers.IntegerField(required=False, min_value=1)
        date_from = serializers.DateField(required=False)
        date_to = serializers.DateField(required=False)

    class CaseCreateInput(serializers.Serializer):
        team = serializers.PrimaryKeyRelatedField(queryset=Team.objects.none())
        title = serializers.CharField(required=False, allow_blank=True, max_length=200)
        facts = serializers.CharField(max_length=100_000)
        offence_date = serializers.DateField()
        defendants = serializers.ListField(child=serializers.CharField(max_length=100), min_length=1,
                                           max_length=MAX_DEFENDANTS)
        confirm_absent_defendants = serializers.BooleanField(
            default=False, help_text="save the case although a defendant's name does not occur in the facts "
                                     "(without it that is a 400 naming the defendants, needs_confirmation: "
                                     "[defendant_absent])")

        def __init__(self, *args, user=None, **kwargs):
            super().__init__(*args, **kwargs)
            # Only the caller's teams: another team's id is "does not exist", like an unknown one.
            if user is not None:
                self.fields["team"].queryset = team_list_for(user=user)

    @extend_schema(operation_id="cases_list", parameters=[CaseFilterInput], responses=CaseSerializer(many=True),
                   summary="Your teams' cases, newest first")
    def get(self, request):
        filters = self.CaseFilterInput(data=request.query_params)
        filters.is_valid(raise_exception=True)
        given = {k: v for k, v in filters.validated_data.items() if v not in ("", None)}
        cases = case_search(user=request.user, **given)
        paginator = Pagination()
        page = paginator.paginate_queryset(cases, request, view=self)
        return paginator.get_paginated_response(CaseSerializer(page, many=True).data)

    @extend_schema(operation_id="cases_create", request=CaseCreateInput,
                   responses={201: CaseSerializer, 200: CaseSerializer, 409: None, 422: None},
                   parameters=[OpenApiParameter(
                       "Idempotency-Key", str, OpenApiParameter.HEADER, required=False,
                       description="Sent again with the same value (same user, 24 h), returns the first request's "
                                   "case with 200 and Idempotent-Replayed: true instead of creating another; 409 "
                                   "while the first request is still running; 422 if the body differs from the "
                                   "first request's.")],
                   summary="Submit a case (facts as text)")
    def post(self, request):
        data = self.CaseCreateInput(data=request.data, user=request.user)
        data.is_valid(raise_exception=True)
        key = request.headers.get("Idempotency-Key", "").strip()
        if len(key) > KEY_MAX_LENGTH:
            raise ValidationError({"Idempotency-Key": f"at most {KEY_MAX_LENGTH} characters"})
        fields = dict(data.validated_data)
        confirmed = fields.pop("confirm_absent_defendants")

        def create():
            return case_intake(user=request.user, confirmed=confirmed, **fields)[0]

        try:
            if not key:
                case, created = create(), True
            else:
                # The same key again (a double click, a retried timeout) returns the first request's case.
                case_id, created = idempotent_create(
                    user_id=request.user.pk, scope="case", key=key, body=fingerprint(data.validated_data),
                    create=lambda: create().pk)
                case = Case.objects.get(pk=case_id)
        except IntakeUnconfirmed as exc:
            raise _unconfirmed(exc) from None
        except DjangoValidationError as exc:
            raise _service_errors(exc) from None
        except IdempotencyConflict as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except IdempotencyMismatch as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        return Response(CaseSerializer(case).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
                        headers={} if created else {"Idempotent-Replayed": "true"})


class CaseDetailApi(_Api):
    class CaseUpdateInput(serializers.Serializer):
        version = serializers.IntegerField(min_value=1,
                                           help_text="the version you edited; a newer one is a conflict (409)")
        title = serializers.CharField(required=False, allow_blank=True, max_length=200)
        facts = serializers.CharField(required=False, max_length=100_000)
        offence_date = serializers.DateField(required=False)
        defendants = serializers.ListField(child=serializers.CharField(max_length=100), min_length=1,
                                           max_length=MAX_DEFENDANTS, required=False)
        confirm_absent_defendants = serializers.BooleanField(default=False)

    @extend_schema(operation_id="cases_retrieve", responses=CaseSerializer)
    def get(self, request, pk: int):
        return Response(CaseSerializer(case_get_for(user=request.user, pk=pk)).data)

    @extend_schema(operation_id="cases_update", request=CaseUpdateInput, responses={200: CaseSerializer, 409: None},
                   summary="Edit a case; every change is kept as a revision")
    def patch(self, request, pk: int):
        case = case_get_for(user=request.user, pk=pk)
        data = self.CaseUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        changes = dict(data.validated_data)
        version = changes.pop("version")
        confirmed = changes.pop("confirm_absent_defendants")
        try:
            case, _warnings = case_revise(case=case, user=request.user, expected_version=version, confirmed=confirmed,
                                          **changes)
        except IntakeUnconfirmed as exc:
            raise _unconfirmed(exc) from None
        except CaseConflict as exc:
            return Response({"detail": " ".join(exc.messages)}, status=status.HTTP_409_CONFLICT)
        except DjangoValidationError as exc:
            raise _service_errors(exc) from None
        return Response(CaseSerializer(case).data)


# --- runs ------------------------------------------------------------------------------------


class CaseRunsApi(_Api):
    class RunCreateInput(serializers.Serializer):
        strategy = serializers.ChoiceField(choices=JudgmentRun.Strategy.values,
                                           default=JudgmentRun.Strategy.STATISTICAL,
                                           help_text="'llm' only where an LLM server is configured")
        ablation = serializers.ChoiceField(choices=list(ABLATIONS), default="full")
        mode = serializers.ChoiceField(choices=JudgmentRun.Mode.values, default=JudgmentRun.Mode.FIXED,
                                       help_text="'agentic': a planner chooses the next source until the evidence "
                                                 "suffices (Legal-R1); 'fixed': the Researcher's four paths")

    @property
    def throttle_scope(self):
        # Only starting a run is expensive; listing runs is throttled like any read.
        return "runs" if self.request is not None and self.request.method == "POST" else None

    @extend_schema(operation_id="cases_runs_list", responses=RunSerializer(many=True))
    def get(self, request, pk: int):
        case = case_get_for(user=request.user, pk=pk)
        from apps.review.selectors import review_outcomes

        runs = case.runs.prefetch_related(_RESULTS, "attempts")
        paginator = Pagination()
        page = paginator.paginate_queryset(runs, request, view=self)
        reviews = review_outcomes([r.pk for r in page])  # one read for the page, not one per run
        return paginator.get_paginated_response(RunSerializer(page, many=True, context={"reviews": reviews}).data)

    @extend_schema(operation_id="cases_runs_create", request=RunCreateInput, responses={201: RunSerializer},
                   summary="Start a judgment run of the case as it is now")
    def post(self, request, pk: int):
        case = case_get_for(user=request.user, pk=pk)
        data = self.RunCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            run = judgment_request(case=case, user=request.user, **data.validated_data)
        except DjangoValidationError as exc:
            raise _service_errors(exc) from None
        return Response(_run_out(run), status=status.HTTP_201_CREATED)


class RunDetailApi(_Api):
    @extend_schema(operation_id="runs_retrieve", responses=RunSerializer,
                   summary="Poll a run: status, progress per defendant, attempts and results")
    def get(self, request, pk: int):
        run = run_get_for(user=request.user, pk=pk)
        prefetch_related_objects([run], _RESULTS, "attempts")  # onto the run just read, not a second read of it
        return Response(RunSerializer(run).data)


class RunBundleApi(_Api):
    class BundleFilterInput(serializers.Serializer):
        defendant = serializers.IntegerField(required=False, min_value=0, max_value=MAX_DEFENDANTS,
                                             help_text="only the defendant at this position (0-based)")

    @extend_schema(
        operation_id="runs_bundle", summary="The evidence bundles of a run, one per defendant (Bundle.to_dict())",
        parameters=[BundleFilterInput],
        responses=inline_serializer("RunBundles", {
            "run": serializers.IntegerField(), "status": serializers.CharField(),
            "case_version": serializers.IntegerField(), "versions": serializers.DictField(),
            "bundles": serializers.ListField(child=serializers.DictField()),
        }),
    )
    def get(self, request, pk: int):
        run = run_get_for(user=request.user, pk=pk)
        query = self.BundleFilterInput(data=request.query_params)
        query.is_valid(raise_exception=True)
        position = query.validated_data.get("defendant")
        etag = run_bundle_etag(run=run, position=position)
        if (not_modified := get_conditional_response(request, etag=etag)) is not None:
            not_modified["ETag"] = etag  # a 304 repeats the validator (RFC 9110 §15.4.5)
            return not_modified
        results = run.results.all() if position is None else run.results.filter(position=position)
        response = Response({"run": run.pk, "status": run.status, "case_version": run.case_version,
                             "versions": run.versions, "bundles": [r.bundle for r in results.order_by("position")]})
        response["ETag"] = etag
        patch_cache_control(response, private=True, no_store=True)  # never stored; the ETag still answers 304
        return response


class RunCancelApi(_Api):
    @extend_schema(operation_id="runs_cancel", request=None, responses={200: RunSerializer},
                   summary="Cancel a queued run, or ask a running one to stop at its next stage")
    def post(self, request, pk: int):
        run = run_get_for(user=request.user, pk=pk)
        try:
            run = judgment_cancel(run=run, user=request.user)
        except DjangoValidationError as exc:
            raise _service_errors(exc) from None
        return Response(_run_out(run))


class RunRetryApi(_Api):
    throttle_scope = "runs"

    @extend_schema(operation_id="runs_retry", request=None, responses={201: RunSerializer},
                   summary="A new run with the same inputs as a failed or cancelled one")
    def post(self, request, pk: int):
        run = run_get_for(user=request.user, pk=pk)
        try:
            new = judgment_retry(run=run, user=request.user)
        except DjangoValidationError as exc:
            raise _service_errors(exc) from None
        return Response(_run_out(new), status=status.HTTP_201_CREATED)
