"""Walk the running app in a real browser as a researcher would, and count what went wrong.

Against a server started by ``make run`` (several web processes, one worker), nothing
but HTTP and the pages a person sees: no ORM, no management command. Two phases:

    # 1. optional upload of a folder of documents into a new library, a plan, a run,
    #    and the ledger scraped into OUT/ledger.json
    .venv/bin/python docs/bench/report/walk.py run --out OUT \\
        --question "…" --scope "…" --library NAME [--upload DIR]

    # 2. decisions read from a JSON file (written after reading OUT/ledger.json), the
    #    report built, read and exported (Markdown, HTML, PDF) into OUT
    .venv/bin/python docs/bench/report/walk.py review --out OUT --run RUN --decisions FILE

The user and password come from ``EB_WALK_USER`` / ``EB_WALK_PASSWORD`` and the server from
``EB_WALK_BASE`` (default http://127.0.0.1:8000). Every page load and every request is
checked: one that lands on the login page is a logout, counted in ``OUT/walk-PHASE.json``
with its URL. Phase 2 ends with 50 plain requests on the session's cookie, which the
server's processes share between them.

A decisions file is ``{"default": "reject", "decisions": [...]}``; each decision names a
claim by ``code`` or by a distinctive piece of its text (``match``) and says ``action``
(approve, reject, narrow), with ``reason_code`` / ``reason`` for a rejection, ``text``
for a narrowing (then approved, with ``note`` as the override reason when the
re-verification is not PASS, or rejected with ``then: "reject"`` and ``reject_reason``)
and ``note`` for an override. Claims no decision names get
the default: "reject" (out of scope) or "skip".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root
from reports.exports.pdf import CHROMIUM_ARGS  # noqa: E402  (the flags the product uses)

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
TERMINAL = ("awaiting_review", "done", "failed", "cancelled")


class Walk:
    """One signed-in browser; every load is checked for a logout."""

    def __init__(self, page: Any, base: str, out: Path) -> None:
        self.page, self.base, self.out = page, base.rstrip("/"), out
        self.loads: list[str] = []
        self.logouts: list[str] = []

    def check(self, url: str) -> None:
        self.loads.append(url)
        if "/accounts/login" in url and len(self.loads) > 1:
            self.logouts.append(url)

    def goto(self, path: str) -> None:
        self.page.goto(path if path.startswith("http") else self.base + path)
        self.check(self.page.url)

    def submit(self, selector: str) -> None:
        with self.page.expect_navigation():
            self.page.click(selector)
        self.check(self.page.url)

    def login(self, user: str, password: str) -> None:
        self.goto("/accounts/login/")
        self.page.fill("input[name=username]", user)
        self.page.fill("input[name=password]", password)
        self.submit("button[type=submit]")
        if "/accounts/login" in self.page.url:
            sys.exit("walk: the login was refused; check EB_WALK_USER / EB_WALK_PASSWORD")

    def save(self, name: str, data: object) -> None:
        (self.out / name).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def summary(self) -> dict[str, Any]:
        return {"page_loads": len(self.loads), "logouts": len(self.logouts), "at": self.logouts}


def upload(walk: Walk, folder: Path, library: str) -> dict[str, Any]:
    page = walk.page
    files = sorted(str(p) for p in folder.iterdir() if p.is_file())
    walk.goto("/library/")
    page.fill("input[name=new_library]", library)
    page.set_input_files("input[type=file]", files)
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#upload-batch")
    walk.check(page.url)
    started = time.monotonic()
    want = f"{len(files)} of {len(files)} files processed"
    page.locator("#upload-batch", has_text=want).wait_for(timeout=1_800_000)
    text = page.inner_text("#upload-batch")
    return {"files": len(files), "seconds": round(time.monotonic() - started, 1), "batch": text}


def wait_for_state(walk: Walk, run_url: str, states: tuple[str, ...], limit_s: float) -> str:
    deadline = time.monotonic() + limit_s
    while True:
        walk.goto(run_url)
        status = str(walk.page.get_attribute("#run-status", "data-state"))
        if status in states or time.monotonic() > deadline:
            return status
        time.sleep(3)


def scrape_ledger(walk: Walk, run: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    path = f"/runs/{run}/ledger/"
    while path:
        walk.goto(path)
        for row in walk.page.locator("#ledger-table tbody tr").all():
            cells = row.locator("td").all_inner_texts()
            link = row.locator("td a").first
            if not link.count():
                continue
            rows.append(
                {
                    "code": link.get_attribute("href").rstrip("/").rsplit("/", 1)[-1],
                    "text": link.inner_text(),
                    "subquestion": cells[1],
                    "relevance": cells[2],
                    "design": cells[3],
                    "status": cells[5],
                    "flags": cells[6],
                    "support": cells[7],
                    "refute": cells[8],
                    "independent": cells[9],
                }
            )
        nxt = walk.page.locator("#ledger-table a[rel=next]")
        path = nxt.get_attribute("href") if nxt.count() else ""
        if path and path.startswith("?"):
            path = f"/runs/{run}/ledger/" + path
    for row in rows:  # the whole text and the anchor quote, from the claim's own page
        walk.goto(f"/claims/{row['code']}/")
        row["text"] = walk.page.inner_text("#claim-text")
        row["finding"] = walk.page.inner_text("#finding")
    return rows


def run_phase(walk: Walk, args: argparse.Namespace) -> None:
    page = walk.page
    report: dict[str, Any] = {}
    if args.upload:
        report["upload"] = upload(walk, Path(args.upload), args.library)
    walk.goto("/plans/new/")
    page.fill("textarea[name=question]", args.question)
    page.fill("textarea[name=scope]", args.scope)
    page.select_option("select[name=library]", label=args.library)
    walk.submit("#new-plan button[type=submit]")
    page.wait_for_selector("#plan-editor")
    report["plan"] = page.url
    report["plan_text"] = page.inner_text("#plan-editor")
    started = time.monotonic()
    walk.submit("#start-run button[type=submit]")
    report["run"] = page.url.rstrip("/").rsplit("/", 1)[-1]
    ledger_phase(walk, args, report, started)


def ledger_phase(
    walk: Walk, args: argparse.Namespace, report: dict[str, Any], started: float
) -> None:
    """Wait for the run to leave its working states, then scrape its ledger."""
    status = wait_for_state(walk, f"/runs/{report['run']}/", TERMINAL, args.limit)
    report["run_seconds_to_review"] = round(time.monotonic() - started, 1)
    report["run_status"] = status
    report["ledger"] = scrape_ledger(walk, report["run"])
    report["walk"] = walk.summary()
    walk.save("ledger.json", report)
    print(json.dumps({k: report[k] for k in ("run", "run_status", "walk")}, indent=2))


def find_claim(rows: list[dict[str, Any]], decision: dict[str, Any]) -> dict[str, Any]:
    for row in rows:
        if decision.get("code") == row["code"] or (
            decision.get("match") and decision["match"] in row["text"]
        ):
            return row
    sys.exit(f"walk: no claim matches {decision}")


def decide(walk: Walk, claim: str, decision: dict[str, Any]) -> dict[str, Any]:
    page, action = walk.page, decision["action"]
    walk.goto(f"/claims/{claim}/")
    done: dict[str, Any] = {"claim": claim, "action": action}
    if action == "narrow":
        page.click("#narrow summary")
        page.fill("#narrow-form textarea[name=text]", decision["text"])
        if decision.get("reason"):
            page.fill("#narrow-form input[name=reason]", decision["reason"])
        walk.submit("#narrow-form button[type=submit]")
        done["reverification"] = page.inner_text("#reverification")
        done["passed"] = "PASS" in done["reverification"]
        action = decision.get("then", "approve")
        decision = decision | {"reason": decision.get("reject_reason", "")}
    if action == "approve":
        note = page.locator("#approve-form textarea[name=note]")
        if note.count() and note.is_visible():
            if not decision.get("note"):  # an override needs a reason: say so, decide nothing
                done["error"] = "approval is an override here and the decision gives no note"
                return done
            page.fill("#approve-form textarea[name=note]", decision["note"])
        walk.submit("#approve-form button[type=submit]")
    elif action == "reject":
        page.click("#reject summary")
        page.select_option("#reject-form select[name=reason_code]", decision["reason_code"])
        if decision.get("reason"):
            page.fill("#reject-form textarea[name=reason]", decision["reason"])
        walk.submit("#reject-form button[type=submit]")
    error = page.locator("#decision-error")
    done["error"] = error.inner_text() if error.count() else ""
    return done


def review_phase(walk: Walk, args: argparse.Namespace) -> None:
    page = walk.page
    plan = json.loads(Path(args.decisions).read_text())
    rows = json.loads((walk.out / "ledger.json").read_text())["ledger"]
    named: dict[str, dict[str, Any]] = {}
    for decision in plan["decisions"]:
        named[find_claim(rows, decision)["code"]] = decision
    outcome: dict[str, Any] = {"decisions": []}
    for row in rows:
        decision = named.get(row["code"])
        if decision is None and plan.get("default") == "reject":
            decision = {"action": "reject", "reason_code": "out-of-scope"}
        if decision is not None:
            outcome["decisions"].append(decide(walk, row["code"], decision) | {"text": row["text"]})
    walk.goto(f"/runs/{args.run}/reports/")
    outcome["gate"] = page.inner_text("#report-gate")
    walk.submit("text=Build report")
    outcome["build"] = wait_for_state(walk, f"/runs/{args.run}/", ("done", "failed"), args.limit)
    walk.goto(f"/runs/{args.run}/")
    walk.page.click("#run-report")
    page.wait_for_url("**/reports/*/")
    walk.check(page.url)
    body = page.inner_text("#report")
    outcome["report_url"] = page.url
    outcome["withheld_markers"] = body.count("[withheld claim text]")
    (walk.out / "report-page.txt").write_text(body + "\n")
    for fmt in ("md", "html", "pdf"):
        with page.expect_download(timeout=300_000) as info:
            page.click(f"#report-exports a[href$='/export/{fmt}']")
        info.value.save_as(walk.out / f"report.{fmt}")
    outcome["requests"] = plain_requests(walk, args.run)
    outcome["walk"] = walk.summary()
    walk.save("walk-review.json", outcome)
    print(json.dumps({k: outcome[k] for k in ("build", "withheld_markers", "walk")}, indent=2))


def plain_requests(walk: Walk, run: str) -> dict[str, int]:
    """Fifty requests on the session cookie, spread over the server's processes."""
    paths = ["/plans/", f"/runs/{run}/", f"/runs/{run}/ledger/", f"/runs/{run}/audit/", "/library/"]
    logouts = 0
    for i in range(50):
        response = walk.page.request.get(walk.base + paths[i % len(paths)])
        if "/accounts/login" in response.url or response.status != 200:
            logouts += 1
    return {"requests": 50, "logged_out_or_refused": logouts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("phase", choices=["run", "ledger", "review"])
    parser.add_argument("--out", required=True)
    parser.add_argument("--question", default="")
    parser.add_argument("--scope", default="")
    parser.add_argument("--library", default="")
    parser.add_argument("--upload", default="")
    parser.add_argument("--run", default="")
    parser.add_argument("--decisions", default="")
    parser.add_argument("--limit", type=float, default=1800.0, help="seconds to wait for a run")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    base = os.environ.get("EB_WALK_BASE", "http://127.0.0.1:8000")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(accept_downloads=True)
        page = context.new_page()
        page.set_default_timeout(120_000)
        walk = Walk(page, base, out)
        walk.login(os.environ.get("EB_WALK_USER", "admin"), os.environ["EB_WALK_PASSWORD"])
        if args.phase == "ledger":  # a run already started: wait for it and scrape
            ledger_phase(walk, args, {"run": args.run}, time.monotonic())
        else:
            (run_phase if args.phase == "run" else review_phase)(walk, args)
        browser.close()


if __name__ == "__main__":
    main()
