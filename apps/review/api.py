"""REST API for review (mounted at /api/v1/): a run's review state, decisions, approval verification,
legal holds, and deleting a case. Team scoping as on the pages (404 for another team's run or case);
reviewing needs the reviewer role, deleting a case the administrator role."""

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.models import Role
from apps.cases.api import UserThrottle, _service_errors
from apps.cases.selectors import case_get_for
from apps.review.models import REASON_MAX, Decision
from apps.review.selectors import review_run_get_for
from apps.review.services.holds import CaseHeld, case_delete, legal_hold_release, legal_hold_set
from apps.review.services.reviews import (
    ReviewConflict,
    approval_valid,
    approval_verify,
    decision_make,
    review_accept_rest,
    review_coverage,
    review_for_run,
    review_open,
)


class IsReviewer(permissions.BasePermission):
    def has_permission(self, request, view):
        return request.user.has_role(Role.REVIEWER)


class _Api(APIView):
    permission_classes = [permissions.IsAuthenticated, IsReviewer]
    throttle_classes = [UserThrottle]


def _conflict(exc: Exception) -> Response:
    return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)


class DecisionSerializer(serializers.ModelSerializer):
    reviewer = serializers.CharField(source="reviewer.username", read_only=True)

    class Meta:
        model = Decision
        fields = ["id", "version", "kind", "reason", "reviewer", "decided_at", "snapshot_sha256", "valid",
                  "invalidated_at", "invalidation_reason"]


CoverageOut = inline_serializer("CoverageOut", {
    "complete": serializers.BooleanField(help_text="an approval by you is possible"),
    "defendants": serializers.ListField(child=inline_serializer("CoverageRow", {
        "position": serializers.IntegerField(), "defendant": serializers.CharField(),
        "opened": serializers.BooleanField(help_text="you fetched this defendant's judgment for review"),
        "articles": serializers.IntegerField(help_text="verified articles"),
        "decided": serializers.IntegerField(), "undecided": serializers.ListField(child=serializers.CharField()),
    })),
})

ReviewOut = inline_serializer("ReviewOut", {
    "run": serializers.IntegerField(), "status": serializers.CharField(), "version": serializers.IntegerField(),
    "assigned_to": serializers.CharField(allow_null=True), "approval_valid": serializers.BooleanField(),
    "coverage": CoverageOut, "decisions": DecisionSerializer(many=True),
})


def _coverage_out(review, user) -> dict:
    coverage = review_coverage(review, user)
    return {"complete": coverage["complete"],
            "defendants": [{k: row[k] for k in ("position", "defendant", "opened", "articles", "decided", "undecided")}
                           for row in coverage["rows"]]}


def _review_out(review, user) -> dict:
    return {"run": review.run_id, "status": review.status, "version": review.version,
            "assigned_to": review.assigned_to.username if review.assigned_to else None,
            "approval_valid": approval_valid(review) is not None, "coverage": _coverage_out(review, user),
            "decisions": DecisionSerializer(review.decisions.select_related("reviewer").order_by("-decided_at", "-pk"),
                                            many=True).data}


class DecisionIn(serializers.Serializer):
    kind = serializers.ChoiceField(choices=Decision.Kind.choices)
    reason = serializers.CharField(max_length=REASON_MAX, trim_whitespace=True)
    version = serializers.IntegerField(required=False, min_value=1,
                                       help_text="the review version you saw; a newer one gives 409")


class ReviewApi(_Api):
    @extend_schema(operation_id="runs_review", responses={200: ReviewOut},
                   summary="A finished run's review: status, version, decisions (approval_valid is checked against "
                           "the current record; POST verify/ to invalidate a changed approval)")
    def get(self, request, pk: int):
        review = review_for_run(review_run_get_for(user=request.user, run_pk=pk))
        return Response(_review_out(review, request.user))


class DecisionApi(_Api):
    @extend_schema(operation_id="runs_decide", request=DecisionIn, responses={201: DecisionSerializer},
                   summary="Approve, reject or return a run with a reason (four-eyes; 409 if already decided)")
    def post(self, request, pk: int):
        review = review_for_run(review_run_get_for(user=request.user, run_pk=pk))
        data = DecisionIn(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            decision = decision_make(review=review, user=request.user, **data.validated_data)
        except DjangoPermissionDenied as exc:
            raise PermissionDenied(str(exc)) from None
        except DjangoValidationError as exc:
            raise _service_errors(exc) from None
        except ReviewConflict as exc:
            return _conflict(exc)
        return Response(DecisionSerializer(decision).data, status=status.HTTP_201_CREATED)


class VerifyApi(_Api):
    @extend_schema(operation_id="runs_review_verify", request=None, responses={200: ReviewOut},
                   summary="Recompute the approval's snapshot; a mismatch invalidates it and returns the run to review")
    def post(self, request, pk: int):
        review = review_for_run(review_run_get_for(user=request.user, run_pk=pk))
        approval_verify(review)
        review.refresh_from_db()
        return Response(_review_out(review, request.user))


ReviewDefendantOut = inline_serializer("ReviewDefendant", {
    "position": serializers.IntegerField(), "defendant": serializers.CharField(),
    "bundle": serializers.DictField(), "coverage": CoverageOut})


class ReviewDefendantApi(_Api):
    @extend_schema(operation_id="runs_review_defendant", responses=ReviewDefendantOut,
                   summary="One defendant's evidence bundle for review (read only; POST records that you opened it)")
    def get(self, request, pk: int, position: int):
        return self._answer(request, pk, position, record=False)

    @extend_schema(operation_id="runs_review_defendant_open", request=None, responses=ReviewDefendantOut,
                   summary="One defendant's evidence bundle for review, recording that you opened it "
                           "(an approval needs every defendant opened)")
    def post(self, request, pk: int, position: int):
        return self._answer(request, pk, position, record=True)

    def _answer(self, request, pk: int, position: int, *, record: bool):
        review = review_for_run(review_run_get_for(user=request.user, run_pk=pk))
        result = review.run.results.filter(position=position).first()
        if result is None:
            return Response({"detail": "no such defendant"}, status=status.HTTP_404_NOT_FOUND)
        if record:
            review_open(review=review, result=result, user=request.user)
        return Response({"position": result.position, "defendant": result.defendant, "bundle": result.bundle,
                         "coverage": _coverage_out(review, request.user)})


AcceptRestIn = inline_serializer("AcceptRestIn", {
    "defendant": serializers.IntegerField(min_value=0, help_text="the defendant's position (0-based)"),
    "version": serializers.IntegerField(required=False, min_value=1)})


class AcceptRestApi(_Api):
    @extend_schema(operation_id="runs_review_accept_rest", request=AcceptRestIn,
                   responses={200: inline_serializer("AcceptRestOut", {"accepted": serializers.IntegerField(),
                                                                        "coverage": CoverageOut})},
                   summary="Accept, as one recorded step, every verified article of an opened defendant that no "
                           "reviewer has decided yet")
    def post(self, request, pk: int):
        review = review_for_run(review_run_get_for(user=request.user, run_pk=pk))
        position = request.data.get("defendant")
        result = review.run.results.filter(position=position).first() if str(position).isdigit() else None
        if result is None:
            raise ValidationError({"defendant": ["no such defendant"]})
        version = request.data.get("version")
        try:
            n = review_accept_rest(review=review, result=result, user=request.user,
                                   version=int(version) if str(version).isdigit() else None)
        except DjangoPermissionDenied as exc:
            raise PermissionDenied(str(exc)) from None
        except DjangoValidationError as exc:
            raise _service_errors(exc) from None
        except ReviewConflict as exc:
            return _conflict(exc)
        return Response({"accepted": n, "coverage": _coverage_out(review, request.user)})


class ReasonIn(serializers.Serializer):
    # DRF's CharField also refuses NUL characters, which the database cannot store.
    reason = serializers.CharField(max_length=REASON_MAX)


def _reason(request) -> str:
    data = ReasonIn(data=request.data)
    data.is_valid(raise_exception=True)
    return data.validated_data["reason"]


class HoldApi(APIView):
    permission_classes = [permissions.IsAuthenticated]
    throttle_classes = [UserThrottle]

    @extend_schema(operation_id="cases_hold", request=ReasonIn, responses={201: None},
                   summary="Put a case under legal hold (reviewers and administrators)")
    def post(self, request, pk: int):
        return self._do(request, pk, legal_hold_set, status.HTTP_201_CREATED)

    @extend_schema(operation_id="cases_hold_release", request=ReasonIn, responses={200: None},
                   summary="Release a case's legal hold, with a reason")
    def delete(self, request, pk: int):
        return self._do(request, pk, legal_hold_release, status.HTTP_200_OK)

    def _do(self, request, pk, service, code):
        case = case_get_for(user=request.user, pk=pk)
        try:
            hold = service(case=case, reason=_reason(request), user=request.user)
        except DjangoPermissionDenied as exc:
            raise PermissionDenied(str(exc)) from None
        except DjangoValidationError as exc:
            raise _service_errors(exc) from None
        return Response({"case": case.pk, "hold": hold.pk, "active": hold.released_at is None}, status=code)


class CaseDeleteApi(APIView):
    permission_classes = [permissions.IsAuthenticated]
    throttle_classes = [UserThrottle]

    @extend_schema(operation_id="cases_delete", request=ReasonIn, responses={204: None},
                   summary="Delete a case and its runs (administrators); 409 while under legal hold")
    def post(self, request, pk: int):
        case = case_get_for(user=request.user, pk=pk)
        try:
            case_delete(case=case, user=request.user, reason=_reason(request))
        except DjangoPermissionDenied as exc:
            raise PermissionDenied(str(exc)) from None
        except DjangoValidationError as exc:
            raise _service_errors(exc) from None
        except CaseHeld as exc:
            return _conflict(exc)
        return Response(status=status.HTTP_204_NO_CONTENT)
