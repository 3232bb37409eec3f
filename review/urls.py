from __future__ import annotations

from django.urls import path

from review import views

run_urls = [
    path("runs/<uuid:code>/ledger/", views.show_ledger, name="review-show-ledger"),
    path("runs/<uuid:code>/ledger/approve/", views.approve_claims, name="review-approve-claims"),
    path("runs/<uuid:code>/queue/", views.show_queue, name="review-show-queue"),
    path("runs/<uuid:code>/audit/", views.show_audit, name="review-show-audit"),
    path("runs/<uuid:code>/audited.<str:fmt>", views.export_audited, name="review-export-audited"),
    path("runs/<uuid:code>/shadow/", views.show_shadow, name="review-show-shadow"),
    path("runs/<uuid:code>/candidates/", views.show_candidates, name="review-show-candidates"),
]
claim_urls = [
    path("claims/<uuid:code>/", views.show_claim, name="review-show-claim"),
    path("claims/<uuid:code>/approve/", views.approve_claim, name="review-approve-claim"),
    path("claims/<uuid:code>/narrow/", views.narrow_claim, name="review-narrow-claim"),
    path("claims/<uuid:code>/reject/", views.reject_claim, name="review-reject-claim"),
    path(
        "claims/<uuid:code>/snapshots/<uuid:snapshot>/",
        views.show_snapshot,
        name="review-show-snapshot",
    ),
]
urlpatterns = run_urls + claim_urls
