"""Forms of the plan pages: every edit form carries the version it was based on."""

from __future__ import annotations

from typing import Any

from django import forms

from ledger.models import Library
from research.models import MEMBER_ROLES
from research.pipeline.records import (
    MAX_QUERY_CHARS,
    MAX_TEXT_CHARS,
    QUERY_CLASSES,
    SOURCE_CLASSES,
    question_problems,
)
from research.services import MAX_SCOPE_CHARS

QUERY_CLASS_CHOICES = [(c, c) for c in QUERY_CLASSES]
SOURCE_CLASS_CHOICES = [(c, c) for c in SOURCE_CLASSES]
DIRECTION_CHOICES = [("up", "up"), ("down", "down")]


def _min_one(what: str) -> dict[str, str]:
    return {
        "min_value": f"The {what} must be at least 1; 0 would let nothing run.",
        "required": f"Give the {what}.",
        "invalid": f"The {what} must be a whole number.",
    }


class PlanCreateForm(forms.Form):
    question = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        strip=True,
        required=False,  # an empty question gets clean_question's message, in words
        help_text="One research question; the planner proposes subquestions and queries.",
    )
    scope = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
        max_length=MAX_SCOPE_CHARS,
        error_messages={
            "max_length": f"The scope is limited to {MAX_SCOPE_CHARS:,} characters "
            "(it has %(show_value)d); say what the research covers, not the background itself."
        },
    )
    library = forms.ModelChoiceField(
        queryset=Library.objects.none(),
        required=False,
        empty_label="(no library: web search only)",
        help_text="The local library a run searches.",
    )

    def __init__(self, user: Any, *args: Any, web_adapters: list[str], **kwargs: Any) -> None:
        """Library choices are the user's; without a web adapter the first one is preselected."""
        super().__init__(*args, **kwargs)
        from ledger.services.library import library_choices_for_plan

        field: Any = self.fields["library"]
        field.queryset = library_choices_for_plan(user).order_by("name")
        if not web_adapters:
            field.empty_label = "(none yet: a run cannot start without one)"
            field.help_text = (
                "No web search adapter is configured on this server: a run searches this "
                "library only."
            )
            first = field.queryset.first()
            if first is not None:
                self.initial.setdefault("library", first.pk)
        else:
            field.help_text = (
                f"The local library a run searches, besides {', '.join(web_adapters)}."
            )

    def clean_question(self) -> str:
        question: str = self.cleaned_data.get("question", "")
        problems = question_problems(question)
        if problems:
            raise forms.ValidationError(problems)
        return question


class ReportImportForm(forms.Form):
    """An engine's report to audit: pasted, or uploaded as a file (the file wins)."""

    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 14}),
        required=False,
        strip=False,
        label="Report",
        help_text="Paste the report with its citations: Markdown, HTML, plain text, or JSON "
        'of {"text": …, "citations": […]}.',
    )
    upload = forms.FileField(
        required=False, label="…or upload it", help_text=".md, .html, .txt or .json"
    )
    format = forms.ChoiceField(
        choices=[
            ("auto", "recognise it"),
            ("markdown", "Markdown"),
            ("html", "HTML"),
            ("text", "plain text"),
            ("json", "JSON {text, citations}"),
        ],
        initial="auto",
    )
    library = forms.ModelChoiceField(
        queryset=Library.objects.none(),
        required=False,
        empty_label="(no library: fetch what the report cites)",
        help_text="Cited documents found here are not fetched; it is also searched for "
        "counter-evidence.",
    )

    def __init__(self, user: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from ledger.services.library import library_choices_for_plan

        field: Any = self.fields["library"]
        field.queryset = library_choices_for_plan(user).order_by("name")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload = data.get("upload")
        if upload is not None:
            if upload.size > MAX_REPORT_BYTES:
                raise forms.ValidationError(
                    f"The file is {upload.size:,} bytes; a report may be at most "
                    f"{MAX_REPORT_BYTES:,} bytes."
                )
            data["data"] = upload.read()
            data["filename"] = upload.name or ""
        elif data.get("text", "").strip():
            data["data"] = data["text"]
            data["filename"] = ""
        else:
            raise forms.ValidationError("Paste the report's text or choose its file.")
        return data


MAX_REPORT_BYTES = 2_000_000


class VersionedForm(forms.Form):
    """Every edit names the version it was made against (the conflict check)."""

    base_version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)


class KeyedForm(VersionedForm):
    key = forms.SlugField(widget=forms.HiddenInput, max_length=40)


class SubquestionForm(VersionedForm):
    text = forms.CharField(
        max_length=MAX_TEXT_CHARS,
        error_messages={"required": "A subquestion needs text."},
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    dimension = forms.CharField(max_length=60, required=False)
    priority = forms.IntegerField(min_value=0, max_value=10, initial=1)
    budget = forms.IntegerField(
        min_value=1,
        max_value=500,
        initial=4,
        label="Query budget",
        error_messages=_min_one("subquestion's query budget"),
    )


class EditSubquestionForm(SubquestionForm, KeyedForm):
    enabled = forms.BooleanField(required=False)


class QueryForm(VersionedForm):
    text = forms.CharField(
        max_length=MAX_QUERY_CHARS,
        error_messages={"required": "A query needs text."},
        label="Query",
    )
    query_class = forms.ChoiceField(choices=QUERY_CLASS_CHOICES, label="Class")
    source_classes = forms.MultipleChoiceField(
        choices=SOURCE_CLASS_CHOICES,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        label="Sources",
    )
    priority = forms.IntegerField(min_value=0, max_value=10, initial=1)


class AddQueryForm(QueryForm):
    subquestion = forms.SlugField(widget=forms.HiddenInput, max_length=40)


class EditQueryForm(QueryForm, KeyedForm):
    enabled = forms.BooleanField(required=False)


class MoveForm(KeyedForm):
    direction = forms.ChoiceField(choices=DIRECTION_CHOICES)

    @property
    def delta(self) -> int:
        return -1 if self.cleaned_data["direction"] == "up" else 1


class ScopeForm(VersionedForm):
    scope = forms.CharField(
        required=False,
        max_length=MAX_SCOPE_CHARS,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Population, setting, study designs preferred, years; mining applies it.",
    )


class SettingsForm(VersionedForm):
    queries = forms.IntegerField(
        min_value=1, max_value=2000, label="Query budget", error_messages=_min_one("query budget")
    )
    documents = forms.IntegerField(
        min_value=1,
        max_value=100_000,
        label="Documents budget",
        error_messages=_min_one("documents budget"),
    )
    wall_time_s = forms.IntegerField(
        min_value=1,
        max_value=7 * 24 * 3600,
        label="Wall time (seconds)",
        error_messages=_min_one("wall-time budget"),
    )
    rounds = forms.IntegerField(min_value=0, max_value=5, label="Follow-up rounds")
    hits_per_query = forms.IntegerField(
        min_value=1,
        max_value=100,
        label="Hits per query",
        error_messages=_min_one("hits per query"),
    )
    claims = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=500,
        label="Claims kept",
        error_messages=_min_one("claims budget"),
    )
    source_classes = forms.MultipleChoiceField(
        choices=SOURCE_CLASS_CHOICES, widget=forms.CheckboxSelectMultiple, required=False
    )
    library = forms.ModelChoiceField(
        queryset=Library.objects.all(), required=False, empty_label="(no library)"
    )


class StartRunForm(VersionedForm):
    pass


class ShareForm(forms.Form):
    """The owner adds a member (or changes a member's role) by username."""

    username = forms.CharField(max_length=150, label="Username")
    role = forms.ChoiceField(choices=[(r.value, r.label) for r in MEMBER_ROLES], label="Role")


class UnshareForm(forms.Form):
    username = forms.CharField(max_length=150)


class DiffForm(forms.Form):
    a = forms.IntegerField(min_value=1, label="From version")
    b = forms.IntegerField(min_value=1, label="To version")


# op name -> form class (the editor's one POST endpoint dispatches on it)
EDIT_FORMS: dict[str, type[forms.Form]] = {
    "add_subquestion": SubquestionForm,
    "edit_subquestion": EditSubquestionForm,
    "toggle_subquestion": KeyedForm,
    "move_subquestion": MoveForm,
    "add_query": AddQueryForm,
    "edit_query": EditQueryForm,
    "toggle_query": KeyedForm,
    "delete_subquestion": KeyedForm,
    "delete_query": KeyedForm,
    "scope": ScopeForm,
    "move_query": MoveForm,
    "settings": SettingsForm,
}


def errors_in_words(form: forms.Form) -> list[str]:
    """All of a form's errors as sentences, naming the field."""
    out: list[str] = []
    for name, errors in form.errors.items():
        label: Any = form.fields[name].label if name in form.fields else ""
        prefix = f"{label or name.replace('_', ' ').capitalize()}: " if name != "__all__" else ""
        out += [f"{prefix}{e}" for e in errors]
    return out
