"""A development set of paraphrased tasks: the answer shares few words with the task.

Each task is phrased the way an agent states its next step; the belief that answers it says
the same thing in other words, and many tasks have a look-alike distractor that shares the
task's words but does not answer it. They sit among one agent's ~300 generated beliefs from
harness/retrieval_set.py (overlapping vocabulary across services). This is the set retrieval
is tuned on: even-numbered tasks are the tuning split, odd-numbered the held-back split.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness import retrieval_set

AGENT = "dev-bot"


@dataclass(frozen=True)
class Task:
    """A task, the belief that answers it and an optional look-alike that does not."""

    task: str
    answer: str
    distractor: str | None = None


TASKS = (
    Task(
        "I'm about to push the new build to customers",
        "Releases go out only after the canary has been healthy for ten minutes",
        "Customers get a changelog email when a build is published",
    ),
    Task(
        "Writing the message for this commit",
        "Summaries of changes use the imperative mood and stay under 72 characters",
        "Commits to main need a signed-off-by line from the reviewer",
    ),
    Task(
        "Picking a time to schedule the database upgrade",
        "Maintenance windows are Sunday 02:00-04:00 UTC, never during business hours",
        "The database upgrade guide lives in the ops wiki",
    ),
    Task(
        "The user wants the quarterly numbers as a spreadsheet",
        "Finance exports are delivered as XLSX with one sheet per region",
        "Quarterly planning meetings happen on the first Monday",
    ),
    Task(
        "Need to install a JavaScript dependency for the frontend",
        "The web app uses pnpm; never run npm install or yarn there",
        "Frontend dependencies are audited for licences each month",
    ),
    Task(
        "Replying to a customer who is angry about a double charge",
        "For billing disputes apologise once, refund first and investigate afterwards",
        "Customers are charged on the first day of each month",
    ),
    Task(
        "Adding a new API endpoint for orders",
        "Every public route needs an OpenAPI description and a contract test before merge",
        "The orders table is partitioned by month",
    ),
    Task(
        "Going to delete an old feature branch",
        "Ask the owner before removing anyone else's branches",
        "Feature flags are removed two weeks after full rollout",
    ),
    Task(
        "How should I name this Python test file",
        "Tests mirror the package layout: tests/<package>/test_<module>.py",
        "Python files are formatted by ruff before commit",
    ),
    Task(
        "Someone asked for production credentials over chat",
        "Secrets are never pasted into messages; share them through the vault only",
        "Production access requests go through the on-call lead",
    ),
    Task(
        "The nightly job failed again, what now",
        "When a scheduled batch breaks, rerun it once and page data on-call if it breaks twice",
        "Nightly jobs write their logs to the data bucket",
    ),
    Task(
        "Booking travel for the offsite in Lisbon",
        "Trips are booked economy class through the company portal, at least 14 days ahead",
        "The offsite agenda is shared in the team calendar",
    ),
    Task(
        "Drafting a reply in German to a supplier",
        "Correspondence with suppliers in Germany is formal and uses Sie",
        "German suppliers invoice in euros",
    ),
    Task(
        "Choosing a colour palette for the dashboard",
        "Charts must stay readable for colour-blind users: no red/green pairs",
        "The dashboard refreshes every five minutes",
    ),
    Task(
        "About to run the migration against the live database",
        "Schema changes are rehearsed on a copy of production before they touch the real one",
        "The live database has read replicas in two regions",
    ),
    Task(
        "Estimating how long the refactor will take",
        "Give ranges instead of single numbers when forecasting effort",
        "The refactor touches the billing and auth modules",
    ),
    Task(
        "The reviewer left a lot of comments on my pull request",
        "Answer every review remark, even if only to say it is done",
        "Pull requests need two approvals for the payments repo",
    ),
    Task(
        "Sending the weekly status update to the team",
        "Weekly reports go out on Friday before noon, bullet points, three sections at most",
        "The team has grown to twelve people this quarter",
    ),
    Task(
        "A user reports the app is slow on their phone",
        "Mobile performance complaints need the device model and OS version before triage",
        "The app is available on both phone stores",
    ),
    Task(
        "Setting up logging in the new service",
        "Logs are structured JSON and never include personal data such as emails",
        "The new service is written in Go",
    ),
    Task(
        "I want to speed up the CI pipeline",
        "Cache dependencies between pipeline runs keyed on the lockfile hash",
        "The CI pipeline posts its status to the team channel",
    ),
    Task(
        "Writing documentation for the public SDK",
        "User docs show a runnable example before explaining parameters",
        "The SDK supports Python 3.10 and newer",
    ),
    Task(
        "Handling dates coming from the partner's API",
        "All timestamps are stored in UTC and converted only at display time",
        "The partner API is rate limited",
    ),
    Task(
        "Should I use a float for the invoice amount",
        "Money is kept as integer cents, never as floating point",
        "Invoices are numbered sequentially per year",
    ),
    Task(
        "Preparing slides for the board meeting",
        "Executive decks lead with the decision needed, details go in the appendix",
        "The board meets four times a year",
    ),
    Task(
        "Need a quick script to clean up S3",
        "Anything that deletes cloud storage runs in dry-run mode first and prints what it"
        " would remove",
        "Storage costs are reviewed each quarter",
    ),
    Task(
        "Opening an incident for the outage",
        "During an outage name one incident commander and post updates every 30 minutes",
        "Outages are counted against the uptime target",
    ),
    Task(
        "Onboarding the new hire next week",
        "New colleagues get a buddy and a first ticket that ships to production in week one",
        "The new hire starts on Tuesday",
    ),
    Task(
        "The customer wants to cancel their plan",
        "Offer a pause before processing a cancellation, but never insist twice",
        "Plans renew automatically every year",
    ),
    Task(
        "Translating the landing page into Spanish",
        "Localised copy is written by native speakers; machine translation is only a draft",
        "The landing page has a Spanish domain",
    ),
    Task(
        "I'm picking an open source library to parse PDFs",
        "Third-party packages need a permissive licence; GPL code is not allowed in the product",
        "PDF parsing is slow for scanned documents",
    ),
    Task(
        "Where do I put the API key for the weather service",
        "Credentials come from environment variables, never from files in the repository",
        "The weather service updates every hour",
    ),
    Task(
        "Scheduling a meeting with the team in Tokyo",
        "Calls with the Japan office are booked for 08:00 Berlin time",
        "The Tokyo team ships the mobile app",
    ),
    Task(
        "Writing the error message for a failed upload",
        "User-facing errors say what happened and what the person can do next, no codes alone",
        "Uploads are limited to 20 MB",
    ),
    Task(
        "Reviewing a change that adds a new table",
        "Every new table needs an index on each foreign key and a retention rule",
        "The change adds a reviewers field to the form",
    ),
    Task(
        "The load test shows latency climbing",
        "Profile before optimising; attach the flame graph to the ticket",
        "The load test runs against staging every night",
    ),
    Task(
        "Preparing the release notes",
        "Changelogs are written for users, grouped by added, changed and fixed",
        "Release notes are published on the blog",
    ),
    Task(
        "Asked to give a discount to a large client",
        "Price reductions above 15 percent need sign-off from the sales director",
        "Large clients have a dedicated account manager",
    ),
    Task(
        "A teammate is out sick and their ticket is urgent",
        "Take over blocked work only after telling the person and the lead in the ticket",
        "Sick leave is recorded in the HR system",
    ),
    Task(
        "Posting about the launch on social media",
        "Public announcements are approved by marketing before they go live",
        "The launch is planned for March",
    ),
    Task(
        "Generating test data for the demo",
        "Demos never use real customer records; generate synthetic people instead",
        "The demo runs on a laptop",
    ),
    Task(
        "I need to rotate the TLS certificate",
        "Certificates are renewed automatically by the ACME job; manual renewal is the fallback",
        "TLS 1.0 is disabled on every load balancer",
    ),
    Task(
        "Deciding whether to add a cache in front of the search service",
        "Add caching only with a measured hit rate target and an invalidation plan",
        "The search service indexes products every hour",
    ),
    Task(
        "Writing a SQL query for the analytics report",
        "Reports read from the warehouse replica, never from the transactional primary",
        "The analytics report has a revenue chart",
    ),
    Task(
        "The intern asks how to get access to GitHub",
        "Repository access is requested through the IT portal and needs the manager's approval",
        "Interns pair with a mentor for code reviews",
    ),
    Task(
        "Ordering new laptops for the team",
        "Hardware purchases over 1000 euros need a purchase order from procurement",
        "Laptops are replaced every three years",
    ),
    Task(
        "Summarising a long email thread for my manager",
        "Summaries for leadership fit in five lines with the ask in the first one",
        "The email thread is about the vendor contract",
    ),
    Task(
        "Setting an alert on the queue length",
        "Alerts must page only for user-visible impact; everything else goes to a ticket",
        "The queue is drained by four workers",
    ),
    Task(
        "Choosing a name for the new microservice",
        "Services are named after what they do, in lowercase kebab-case, no codenames",
        "The new microservice handles refunds",
    ),
    Task(
        "Running the app locally with Docker",
        "Local stacks start with make up, which uses the compose file in deploy/local",
        "Docker images are scanned for vulnerabilities",
    ),
    Task(
        "Getting ready to pair program with a designer",
        "Share the screen at a large font size and narrate what you type",
        "Designers work in Figma",
    ),
    Task(
        "Recording a decision about the database choice",
        "Architecture decisions are written as ADRs in docs/adr with context and consequences",
        "The database choice affects hosting costs",
    ),
    Task(
        "The customer's data export request came in",
        "Personal data exports must be answered within 30 days and sent encrypted",
        "Exports are generated as CSV by default",
    ),
    Task(
        "Fixing a typo on the pricing page",
        "Copy edits to the website go through the content team's queue, not straight to main",
        "The pricing page lists three plans",
    ),
    Task(
        "I'm on call tonight and my laptop battery is dying",
        "On-call engineers keep the phone charged and carry the hotspot during their shift",
        "On-call handover happens at 09:00",
    ),
    Task(
        "Merging the hotfix into the release branch",
        "Hotfixes land on main first and are cherry-picked into release branches",
        "Release branches are named by year and month",
    ),
)


def beliefs_and_tasks() -> tuple[list[tuple[str, str, float]], list[tuple[str, str]]]:
    """((belief id, text, confidence) of the memory, (task, id of the answer) pairs).

    The memory is AGENT's generated beliefs plus every answer and distractor here; answers are
    kept with less confidence than their distractors, so confidence alone never finds them.
    """
    data = retrieval_set.build()
    memory = [(b.belief_id, b.content, b.confidence) for b in data.beliefs if b.agent_id == AGENT]
    tasks = []
    for index, task in enumerate(TASKS):
        answer_id = f"p_{index:02d}_answer"
        memory.append((answer_id, task.answer, 0.6))
        if task.distractor is not None:
            memory.append((f"p_{index:02d}_distractor", task.distractor, 0.95))
        tasks.append((task.task, answer_id))
    return memory, tasks
