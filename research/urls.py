from __future__ import annotations

from django.urls import path

from research import views

plan_urls = [
    path("plans/", views.list_plans, name="research-list-plans"),
    path("plans/new/", views.create_plan, name="research-create-plan"),
    path("plans/audit/", views.import_report, name="research-import-report"),
    path("plans/<uuid:code>/", views.show_plan, name="research-show-plan"),
    path("plans/<uuid:code>/edit/", views.edit_plan, name="research-edit-plan"),
    path("plans/<uuid:code>/form/", views.show_edit_form, name="research-show-edit-form"),
    path("plans/<uuid:code>/versions/", views.diff_plan, name="research-diff-plan"),
    path("plans/<uuid:code>/runs/", views.start_run, name="research-start-run"),
    path("plans/<uuid:code>/members/", views.share_plan, name="research-share-plan"),
    path("plans/<uuid:code>/members/remove/", views.unshare_plan, name="research-unshare-plan"),
]
run_urls = [
    path("runs/<uuid:code>/", views.show_run, name="research-show-run"),
    path("runs/<uuid:code>/cancel/", views.cancel_run, name="research-cancel-run"),
]
urlpatterns = plan_urls + run_urls
