from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from research import views as research_views

urlpatterns = [
    path("", research_views.home, name="home"),
    path("healthz", research_views.healthz, name="healthz"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("", include("research.urls")),
    path("", include("ledger.urls")),
    path("", include("review.urls")),
    path("", include("reports.urls")),
]
