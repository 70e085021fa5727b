"""A labelled corpus of (active belief, proposed belief) pairs for measuring the gate."""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from credence.memory.semantics.tokens import jaccard

EXACT_DUPLICATE = "exact_duplicate"
PARAPHRASE_DUPLICATE = "paraphrase_duplicate"
NEGATION_CONTRADICTION = "negation_contradiction"
VALUE_CHANGE = "value_change"
COMPATIBLE = "compatible"
UNRELATED = "unrelated"
CATEGORIES = (
    EXACT_DUPLICATE,
    PARAPHRASE_DUPLICATE,
    NEGATION_CONTRADICTION,
    VALUE_CHANGE,
    COMPATIBLE,
    UNRELATED,
)

# The same text up to case, whitespace and punctuation.
_EXACT = [
    ("Split PDFs over 10MB before ingesting them.", "split pdfs over 10mb before ingesting them"),
    ("Ask before deleting any customer data", "ASK BEFORE DELETING ANY CUSTOMER DATA!"),
    (
        "Reply to refund requests within one business day.",
        "Reply to refund requests, within one business day",
    ),
    ("Run the linter before every commit", "  Run the linter   before every commit. "),
    (
        "Cite the ticket number in every commit message",
        "cite the ticket number in every commit message.",
    ),
    (
        "Never email customers from a personal address",
        "Never email customers from a personal address!!",
    ),
    ("Don't retry payments that were declined", "Don’t retry payments that were declined."),
    ("Summarise meetings in three bullet points", "summarise meetings in three bullet-points"),
    ("Tag every incident with its severity", "Tag every incident with its severity?"),
    ("Use the staging database for load tests", "use the STAGING database for load tests"),
    (
        "Confirm the shipping address before dispatch",
        "Confirm the shipping address, before dispatch.",
    ),
    ("Round currency amounts to two decimals", "Round currency amounts to two decimals."),
    ("Keep answers under 200 words", "keep answers under 200 words!"),
    (
        "Escalate legal threats to the on-call manager",
        "Escalate legal threats to the on call manager",
    ),
    ("Write dates as YYYY-MM-DD", "write dates as yyyy mm dd"),
    (
        "Check the allergy list before suggesting a recipe",
        "Check the allergy list before suggesting a recipe…",
    ),
    (
        "Pin dependency versions in production builds",
        "Pin dependency versions in production builds.",
    ),
    ("Lock the account after five failed logins", "Lock the account after five failed logins."),
    (
        "Quote the customer's own words in bug reports",
        "Quote the customers own words in bug reports",
    ),
    ("Avoid jargon in patient-facing letters", "avoid jargon in patient facing letters"),
    ("Back up the wiki every Sunday night", "Back up the wiki every Sunday night."),
    (
        "Label invoices with the purchase order number",
        "LABEL INVOICES WITH THE PURCHASE ORDER NUMBER",
    ),
    ("Prefer small pull requests over big ones", "prefer small pull requests over big ones"),
    (
        "Translate error messages for the support team",
        "Translate error messages for the support team!",
    ),
    ("Archive closed tickets after ninety days", "Archive closed tickets after ninety days."),
    ("Measure flour by weight, not by volume", "Measure flour by weight not by volume"),
    ("Never share API keys in chat", "never share api keys in chat."),
    (
        "Double-check the timezone of every meeting invite",
        "Double check the timezone of every meeting invite",
    ),
    ("Attach the receipt to every expense claim", "Attach the receipt to every expense claim."),
    ("Redact phone numbers from call transcripts", "redact phone numbers from call transcripts"),
]

# The same lesson in other words: number and unit formats, comparatives, frequency adverbs,
# word and clause order, plurals, passive voice, and near-synonyms the embedding recognises.
_PARAPHRASE = [
    (
        "Split PDFs over 5GB before ingesting",
        "Split PDFs larger than five gigabytes before ingesting",
    ),
    ("Split PDFs over 5GB before ingesting", "Split PDFs over 5 GB before ingesting"),
    ("Compress images larger than 2MB", "Images over 2 MB should always be compressed"),
    (
        "Before deploying, run the database migrations",
        "Run the database migrations before deploying",
    ),
    ("Run the linter every day", "Run the linter daily"),
    ("Keep PRs to no more than 400 lines", "Keep PRs to at most 400 lines"),
    ("Timeouts reliably hit uploads above 10MB", "Timeouts consistently hit uploads over 10 MB"),
    ("Keep request logs for 14 days", "Keep request logs for two weeks"),
    ("Retry a failed webhook after 30 seconds", "Retry a failed webhook after 30s"),
    ("Rotate the signing keys every month", "Rotate the signing keys monthly"),
    ("When a customer is angry, apologise first", "Apologise first when a customer is angry"),
    ("Exports with more than 10,000 rows time out", "Exports with over 10000 rows time out"),
    ("Limit each reply to three paragraphs", "Limit each reply to 3 paragraphs"),
    ("Always confirm the order number with the caller", "Confirm the order number with the caller"),
    (
        "Reliably attach the invoice to the reminder email",
        "Attach the invoice to the reminder email",
    ),
    ("Cache API responses for an hour", "Cache API responses for 60 minutes"),
    ("If the build fails, notify the author", "Notify the author if the build fails"),
    ("Files under 1MB can be inlined", "Files smaller than 1 MB can be inlined"),
    (
        "Discounts above 20% need a manager's approval",
        "Discounts over 20 percent need a manager's approval",
    ),
    ("Schedule the report for 9am", "Schedule the report for 9:00 am"),
    (
        "Patients over 65 get the reminder call",
        "Patients older than 65 always get the reminder call",
    ),
    ("Run a full backup every night", "Run a full backup nightly"),
    ("After a release, update the changelog", "Update the changelog after a release"),
    ("Use metric units in recipes", "Recipes should use metric units"),
    ("Review expense claims above $500", "Review expense claims over $500"),
    ("Close stale tickets after 30 days", "Close stale tickets after a month"),
    ("Flag transactions larger than $10k", "Flag transactions over $10,000"),
    ("Deploys on Fridays consistently break checkout", "Deploys on Friday reliably break checkout"),
    ("Respond to pages within fifteen minutes", "Respond to pages within 15 min"),
    ("Resize thumbnails to at least 300 pixels", "Resize thumbnails to no less than 300 pixels"),
    ("Always run the test suite before pushing", "Run the test suite before you push"),
    (
        "Mention the ticket number in the branch name",
        "Mention the ticket numbers in the branch names",
    ),
    (
        "Once the contract is signed, create the client folder",
        "Create the client folder once the contract is signed",
    ),
    (
        "Warn the user when the disk is more than 90% full",
        "Warn the user when the disk is above 90% full",
    ),
    ("Split CSV files bigger than 100MB", "Split CSV files larger than 100 megabytes"),
    ("Large PDFs crash the ingester", "The ingester crashes on large PDFs"),
    ("Do not reply to spam", "Never answer spam"),
    ("Greet callers by their first name", "Always greet callers using their first names"),
]

# Opposite advice about the same action on the same object.
_NEGATION = [
    ("Retry failed uploads over 10MB", "Never retry failed uploads over 10MB"),
    ("Always run the test suite before pushing", "Never run the test suite before pushing"),
    ("Cache API responses for anonymous users", "Don't cache API responses for anonymous users"),
    ("Email the customer after each deploy", "Do not email the customer after each deploy"),
    ("Auto-merge dependency updates", "Never auto-merge dependency updates"),
    ("Share the dashboard link with clients", "Avoid sharing the dashboard link with clients"),
    (
        "Refund orders without a manager's approval",
        "Never refund orders without a manager's approval",
    ),
    ("Use emojis in customer replies", "Don't use emojis in customer replies"),
    ("Squash commits when merging", "Do not squash commits when merging"),
    ("Call patients to confirm appointments", "Stop calling patients to confirm appointments"),
    (
        "Print boarding passes for every traveller",
        "No longer print boarding passes for every traveller",
    ),
    ("Send the weekly digest on Mondays", "Never send the weekly digest on Mondays"),
    (
        "Include the full stack trace in bug reports",
        "Don't include the full stack trace in bug reports",
    ),
    ("Store session tokens in local storage", "Never store session tokens in local storage"),
    ("Restart the worker when the queue stalls", "Do not restart the worker when the queue stalls"),
    ("Add salt to the pasta water", "Don't add salt to the pasta water"),
    ("Accept invoices sent by fax", "Refuse invoices sent by fax"),
    ("Mark newsletters as read automatically", "Never mark newsletters as read automatically"),
    ("Rebase feature branches onto main", "Avoid rebasing feature branches onto main"),
    (
        "Approve vacation requests on the same day",
        "Don't approve vacation requests on the same day",
    ),
    (
        "Delete the temporary files after the export",
        "Never delete the temporary files after the export",
    ),
    (
        "Offer a discount code to churning customers",
        "Do not offer a discount code to churning customers",
    ),
    ("Translate product names in the catalogue", "Never translate product names in the catalogue"),
    ("Log the request body for failed calls", "Don't log the request body for failed calls"),
    (
        "Ping the reviewer on Slack after two days",
        "Never ping the reviewer on Slack after two days",
    ),
    ("Batch the database writes during imports", "Do not batch the database writes during imports"),
    ("Open pull requests as drafts", "Never open pull requests as drafts"),
    ("Mention competitors in sales emails", "Avoid mentioning competitors in sales emails"),
    (
        "Prefill the shipping form with the billing address",
        "Don't prefill the shipping form with the billing address",
    ),
    ("Keep the feature flag on in production", "Don't keep the feature flag on in production"),
    ("Indent with tabs", "Do not use tabs for indentation"),
    (
        "Answer support chats in the customer's language",
        "Never answer support chats in the customer's language",
    ),
]

# The same statement with one value changed: a tool, number, duration, time, weekday,
# language, person, team, file format, environment or region.
_VALUE_CHANGE = [
    ("Use yarn for the frontend", "Use bun for the frontend"),
    ("Keep logs for 14 days", "Keep logs for 90 days"),
    ("Run the nightly backup at 2am", "Run the nightly backup at 3am"),
    ("Deploy the mobile app on Tuesdays", "Deploy the mobile app on Thursdays"),
    ("Reply to French customers in English", "Reply to French customers in French"),
    ("Ask Maria to review billing changes", "Ask Tom to review billing changes"),
    ("Export the monthly report as CSV", "Export the monthly report as XLSX"),
    ("Host the search API in eu-west-1", "Host the search API in us-east-1"),
    ("Split PDFs over 10MB before ingesting", "Split PDFs over 25MB before ingesting"),
    ("Page the platform team for database outages", "Page the data team for database outages"),
    ("Cap each reply at 200 words", "Cap each reply at 150 words"),
    ("Lock the account after five failed logins", "Lock the account after three failed logins"),
    ("Write the API in Go", "Write the API in Rust"),
    ("Format Python code with black", "Format Python code with ruff"),
    ("Run load tests against staging", "Run load tests against production"),
    ("The standup starts at 9:30", "The standup starts at 10:00"),
    ("Charge $20 per seat per month", "Charge $25 per seat per month"),
    ("Archive closed tickets after 90 days", "Archive closed tickets after 30 days"),
    ("Store uploaded images in PNG", "Store uploaded images in WebP"),
    ("Escalate security reports to Priya", "Escalate security reports to Daniel"),
    ("Send invoices on the 1st of each month", "Send invoices on the 15th of each month"),
    ("Package the service with Docker", "Package the service with Podman"),
    ("Discounts above 20% need approval", "Discounts above 15% need approval"),
    ("Retry webhooks after 30 seconds", "Retry webhooks after 5 minutes"),
    ("Track bugs in Jira", "Track bugs in Linear"),
    ("Serve the docs from Netlify", "Serve the docs from Vercel"),
    ("Publish the newsletter every Friday", "Publish the newsletter every Monday"),
    ("Use PostgreSQL for the billing service", "Use MySQL for the billing service"),
    ("Keep a 10% cash buffer in the budget", "Keep a 5% cash buffer in the budget"),
    ("Send the release notes to the support team", "Send the release notes to the sales team"),
    ("Translate the onboarding emails into German", "Translate the onboarding emails into Spanish"),
    ("Resize thumbnails to 300 pixels", "Resize thumbnails to 480 pixels"),
    ("Run database migrations with Alembic", "Run database migrations with Flyway"),
    ("Limit free accounts to 3 projects", "Limit free accounts to 5 projects"),
    ("Bill customers in EUR", "Bill customers in USD"),
    ("Maria owns the billing service", "Tom owns the billing service"),
    ("Our CI runs on GitHub Actions", "Our CI runs on GitLab CI"),
    ("Use npm to install packages", "Use pnpm to install packages"),
    ("Store backups in S3", "Store backups in GCS"),
    ("The release train leaves every two weeks", "The release train leaves every three weeks"),
]

# The same topic, compatible advice: neither a duplicate nor a contradiction.
_COMPATIBLE = [
    ("Never deploy on Fridays", "Deploy on Mondays"),
    ("Never approve a refund without a receipt", "Receipts are stored in the billing folder"),
    ("Use yarn for the frontend", "Run yarn install before building the frontend"),
    ("Keep logs for 14 days", "Compress logs before archiving them"),
    ("Split PDFs over 10MB before ingesting", "The ingester times out on scanned PDFs"),
    ("Run the test suite before pushing", "The test suite takes about eight minutes"),
    ("Reply to customers in English", "Customers can switch the language in their settings"),
    ("Ask Maria to review billing changes", "Maria is out of office in August"),
    ("Export the monthly report as CSV", "The monthly report goes to the finance lead"),
    ("Host the search API in eu-west-1", "The search API needs two replicas"),
    ("Never store passwords in plain text", "Hash passwords with a per-user salt"),
    ("Page the platform team for database outages", "The platform team owns the deploy pipeline"),
    ("Lock the account after five failed logins", "Unlocking an account needs a support ticket"),
    ("Don't email customers on weekends", "Answer urgent customer emails within an hour"),
    ("Avoid jargon in patient letters", "Patient letters need the clinic's letterhead"),
    ("Never refund digital downloads", "Refunds for physical goods take five days"),
    ("Cache API responses for an hour", "Invalidate the cache when a product changes"),
    ("Write the API in Go", "The API serves about 2,000 requests per second"),
    ("Deploy the API on Mondays", "Deploy the docs on Mondays"),
    ("Charge $20 per seat per month", "Annual plans get two months free"),
    ("Archive closed tickets after 90 days", "Closed tickets can be reopened by the customer"),
    ("Run the nightly backup at 2am", "Backups are encrypted with the vault key"),
    ("Do not share API keys in chat", "Rotate API keys every quarter"),
    ("Translate the onboarding emails into German", "Onboarding emails link to the help centre"),
    ("Never run migrations during business hours", "Migrations must be reversible"),
    ("Use PostgreSQL for the billing service", "The billing service exposes a gRPC interface"),
    ("Format Python code with black", "Type-check Python code with mypy"),
    ("Publish the newsletter every Friday", "The newsletter has 12,000 subscribers"),
    ("Stop sending paper invoices", "Digital invoices go out from the billing address"),
    ("Don't schedule meetings before 10am", "Team meetings last at most 30 minutes"),
    ("Keep a 10% cash buffer in the budget", "The budget is reviewed every quarter"),
    ("Never promise delivery dates to customers", "Tell customers their order number"),
    ("Send the release notes to the support team", "Release notes list every breaking change"),
    ("Avoid caching personalised pages", "Cache the static assets for a year"),
    ("Store uploaded images in PNG", "Uploaded images are scanned for malware"),
    ("Never merge without a review", "Reviews should happen within one day"),
    ("Ask before deleting customer data", "Customer data lives in the eu-west-1 region"),
    ("Bill customers in EUR", "Invoices include the VAT number"),
    ("Don't retry declined payments", "Retry failed webhooks with backoff"),
    ("Limit free accounts to 3 projects", "Free accounts cannot invite guests"),
    ("Resize thumbnails to 300 pixels", "Thumbnails are generated on upload"),
    ("Escalate security reports to Priya", "Security reports arrive through the bug bounty form"),
    ("Never log credit card numbers", "Log the request id for every payment"),
    ("Track bugs in Jira", "Label bugs with the affected component"),
    ("Use metric units in recipes", "Recipes list the oven temperature first"),
    ("No longer print boarding passes", "Boarding passes are sent by text message"),
    ("Refuse invoices sent by fax", "Invoices sent by post are scanned on arrival"),
    ("Retry failed uploads over 10MB", "Show a progress bar for uploads over 10MB"),
    (
        "Never auto-merge dependency updates",
        "Group dependency updates into one weekly pull request",
    ),
    ("Keep the feature flag on in staging", "Feature flags are configured in the admin panel"),
    ("Use yarn for the frontend", "Use poetry for the backend"),
    ("Ship the API on Mondays", "Ship the CLI on Mondays"),
    ("Keep logs for 14 days", "Keep backups for 90 days"),
    ("Never deploy on Fridays", "Never deploy during the holiday freeze"),
    ("Send invoices on the 1st of each month", "Send payment reminders on the 10th of each month"),
]

# Different topics altogether.
_UNRELATED = [
    ("Use yarn for the frontend", "Greet returning customers by name"),
    ("Keep logs for 14 days", "Measure flour by weight"),
    ("Split PDFs over 10MB before ingesting", "Book flights at least two weeks ahead"),
    ("Never deploy on Fridays", "Offer oat milk with every coffee order"),
    ("Reply to customers in English", "Rotate the database credentials quarterly"),
    ("Ask Maria to review billing changes", "Water the office plants on Wednesdays"),
    ("Run the test suite before pushing", "Invoices are due within 30 days"),
    ("Export the monthly report as CSV", "Never leave the server room door open"),
    ("Host the search API in eu-west-1", "Summarise podcasts in five bullet points"),
    ("Page the platform team for outages", "Serve the soup before the main course"),
    ("Cache API responses for an hour", "Thank volunteers in the monthly newsletter"),
    ("Lock the account after five failed logins", "Use a serif font for printed menus"),
    ("Charge $20 per seat per month", "Do not park in the visitor spaces"),
    ("Write the API in Go", "Send birthday cards to long-time clients"),
    ("Format Python code with black", "Hotel bookings need a passport number"),
    ("Never store passwords in plain text", "Bake the bread at 220 degrees"),
    ("Archive closed tickets after 90 days", "Stretch before the Thursday run"),
    ("Translate the onboarding emails into German", "The warehouse closes at 6pm"),
    ("Use PostgreSQL for the billing service", "Children under 12 eat free on Sundays"),
    ("Publish the newsletter every Friday", "Calibrate the scales every morning"),
    ("Don't email customers on weekends", "Label the freezer bags with the date"),
    ("Escalate security reports to Priya", "Keep the projector remote in the top drawer"),
    ("Resize thumbnails to 300 pixels", "Quote shipping costs before checkout"),
    ("Store uploaded images in PNG", "Interview candidates in pairs"),
    ("Track bugs in Jira", "Order paper towels when the stock is low"),
    ("Keep a 10% cash buffer in the budget", "Restart the router if video calls stutter"),
    ("Retry webhooks after 30 seconds", "Wear safety boots on the loading dock"),
    ("Use metric units in recipes", "Pull requests need two approvals"),
    ("Bill customers in EUR", "Never run the dishwasher half empty"),
    ("Limit free accounts to 3 projects", "Read the contract twice before signing"),
]

CORPUS: list[tuple[str, str, str]] = [
    (category, old, new)
    for category, pairs in (
        (EXACT_DUPLICATE, _EXACT),
        (PARAPHRASE_DUPLICATE, _PARAPHRASE),
        (NEGATION_CONTRADICTION, _NEGATION),
        (VALUE_CHANGE, _VALUE_CHANGE),
        (COMPATIBLE, _COMPATIBLE),
        (UNRELATED, _UNRELATED),
    )
    for old, new in pairs
]


def predicted(reasons: tuple[str, ...], gate: str) -> str:
    """The corpus category a gate result stands for (compatible covers "nothing to say")."""
    if gate == "duplicate":
        if any(r.startswith("duplicate_of:") for r in reasons):
            return EXACT_DUPLICATE
        return PARAPHRASE_DUPLICATE
    if any(r.startswith("changes:") for r in reasons):
        return VALUE_CHANGE
    if any(r.startswith("contradicts:") for r in reasons):
        return NEGATION_CONTRADICTION
    return COMPATIBLE


def run_corpus(embed) -> list[tuple[str, str, str, str, tuple[str, ...]]]:
    """Gate every pair (old active, new proposed add) with ``embed(texts) -> unit rows``.

    Returns (category, old, new, predicted category, reasons) per pair.
    """
    from datetime import UTC, datetime

    from credence.memory.semantics.gate import BeliefIndex, LiveBelief, Proposal, gate
    from credence.models.reasons import encode

    now = datetime(2026, 6, 1, tzinfo=UTC)
    olds = sorted({old for _, old, _ in CORPUS})
    news = sorted({new for _, _, new in CORPUS})
    vectors = dict(zip(olds + news, embed(olds + news), strict=True))
    rows = []
    for category, old, new in CORPUS:
        index = BeliefIndex.build(
            [LiveBelief("bel_old", old, "active", 0.8, now, now, embedding=vectors[old])]
        )
        proposal = Proposal(0, "add", new, 0.7, "corpus", ("ep_1",))
        (result,) = gate([proposal], index, frozenset(), vectors[new][None, :])
        reasons = tuple(encode(r) for r in result.reasons)
        rows.append((category, old, new, predicted(reasons, result.gate), reasons))
    return rows


def scores(rows) -> dict[str, dict[str, float]]:
    """Per category: pairs, precision and recall (unrelated pairs count as compatible)."""

    def truth(category: str) -> str:
        return COMPATIBLE if category == UNRELATED else category

    table = {}
    for category in CATEGORIES:
        mine = [row for row in rows if row[0] == category]
        hits = sum(1 for row in mine if row[3] == truth(category))
        claimed = [row for row in rows if row[3] == truth(category)]
        right = sum(1 for row in claimed if truth(row[0]) == row[3])
        table[category] = {
            "pairs": len(mine),
            "recall": hits / len(mine) if mine else 0.0,
            "precision": right / len(claimed) if claimed else 0.0,
        }
    return table


def polarity_conflict(
    tokens_a: AbstractSet[str],
    negative_a: bool,
    tokens_b: AbstractSet[str],
    negative_b: bool,
    threshold: float = 0.4,
) -> bool:
    """Oracle for the lexical contradiction floor: exactly one side negated, Jaccard ≥ t.

    Two negative statements agree ("Never X" / "Don't X"), so they are never a conflict.
    """
    if negative_a == negative_b:
        return False
    return jaccard(tokens_a, tokens_b) >= threshold - 1e-12
