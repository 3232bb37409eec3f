from __future__ import annotations

from django.urls import path

from reports import views

run_report_urls = [
    path("runs/<uuid:code>/reports/", views.list_reports, name="review-list-reports"),
    path("runs/<uuid:code>/reports/new", views.create_report, name="review-create-report"),
    path(
        "runs/<uuid:code>/reports/v<int:version>/",
        views.show_report_version,
        name="review-show-report-version",
    ),
    path("runs/<uuid:code>/diff/", views.diff_runs, name="review-diff-runs"),
]
report_urls = [
    path("reports/<uuid:code>/", views.show_report, name="review-show-report"),
    path("reports/<uuid:code>/export/<str:fmt>", views.export_report, name="review-export-report"),
]
about_urls = [
    path("about/", views.about, name="review-show-about"),
    path("about/bundle-key.pem", views.download_public_key, name="review-download-public-key"),
]
urlpatterns = run_report_urls + report_urls + about_urls
