"""Forms of the library pages: source filters and file uploads."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from ledger.models import Library, SourceType

# What the file picker offers (its ``accept``; reStructuredText is read as plain text).
# Another file is still taken: ingestion reads its type from its content, and one it
# cannot read gets its own error line in the batch while the other files go on.
UPLOAD_SUFFIXES = (
    ".html",
    ".htm",
    ".pdf",
    ".md",
    ".markdown",
    ".rst",
    ".txt",
    ".text",
    ".jsonl",
)
MAX_FILES = 50


class SourceFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Search titles and ids")
    library = forms.ModelChoiceField(
        Library.objects.all(), required=False, to_field_name="code", empty_label="All libraries"
    )
    source_type = forms.ChoiceField(
        choices=[("", "All types"), *SourceType.choices], required=False, label="Type"
    )
    cluster = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)
    duplicates = forms.BooleanField(required=False, label="Only near-duplicate clusters")

    def __init__(self, user: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from ledger.services.library import readable_libraries

        self.fields["library"].queryset = readable_libraries(user)  # type: ignore[attr-defined]


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    widget = MultipleFileInput

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        files = data if isinstance(data, list | tuple) else [data]
        return [super(MultipleFileField, self).clean(item, initial) for item in files if item]


class UploadForm(forms.Form):
    library = forms.ModelChoiceField(
        Library.objects.all(),
        required=False,
        to_field_name="code",
        empty_label="New library…",
    )
    new_library = forms.CharField(required=False, max_length=200, label="New library name")
    documents = MultipleFileField(
        label=(
            "Files (HTML, PDF, Markdown, reStructuredText, plain text; "
            "a corpus as BEIR or SciFact .jsonl)"
        ),
        allow_empty_file=True,  # an empty file gets its own clear error from ingestion
        widget=MultipleFileInput(attrs={"accept": ",".join(UPLOAD_SUFFIXES)}),
    )

    def __init__(self, user: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from ledger.services.library import writable_libraries

        # Only libraries this user may add to: another's library is not even a choice.
        self.fields["library"].queryset = writable_libraries(user)  # type: ignore[attr-defined]

    def clean_documents(self) -> list[UploadedFile]:
        files: list[UploadedFile] = self.cleaned_data["documents"]
        if not files:
            raise forms.ValidationError("Choose at least one file.")
        if len(files) > MAX_FILES:
            raise forms.ValidationError(f"At most {MAX_FILES} files per upload.")
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0
        too_big = [f.name for f in files if limit and (f.size or 0) > limit]
        if too_big:
            names = ", ".join(map(str, too_big))
            raise forms.ValidationError(f"Over the {limit // 2**20} MB limit per file: {names}")
        return files

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not data.get("library") and not (data.get("new_library") or "").strip():
            self.add_error("new_library", "Pick a library or name a new one.")
        return data
