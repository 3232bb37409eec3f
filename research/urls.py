from __future__ import annotations

from django.urls import path

from research import views

plan_urls = [
    path("plans/", views.list_plans, name="research-list-plans"),
    path("plans/<uuid:code>/", views.show_plan, name="research-show-plan"),
]
run_urls = [
    path("runs/<uuid:code>/", views.show_run, name="research-show-run"),
]
urlpatterns = plan_urls + run_urls
