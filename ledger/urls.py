from __future__ import annotations

from django.urls import path

from ledger import views

source_urls = [
    path("library/", views.list_sources, name="ledger-list-sources"),
    path("sources/<uuid:code>/", views.show_source, name="ledger-show-source"),
]
upload_urls = [
    path("library/uploads/", views.create_upload, name="ledger-create-upload"),
    path("library/uploads/<uuid:batch>/", views.show_upload_batch, name="ledger-show-upload-batch"),
]
urlpatterns = source_urls + upload_urls
