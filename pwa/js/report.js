// Report: is memory getting better? Charts drawn as inline SVG, each with its numbers in a table.
import { api } from "./api.js";
import { h, percent, plural, replace } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const OUTCOMES = ["kept", "edited", "forgotten", "superseded", "pending"];
const PERIODS = [7, 30, 90];
const WIDTH = 320;
const HEIGHT = 120;

/** An SVG element with attributes (presentation attributes only: the CSP allows no style). */
function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  for (const child of children.flat(Number.POSITIVE_INFINITY)) if (child) el.append(child);
  return el;
}

/** A chart: an image with a title and a description, its numbers in a table right after. */
function chart(id, title, summary, drawing, table) {
  const titleId = `${id}-title`;
  const descId = `${id}-desc`;
  const picture = svg(
    "svg",
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-labelledby": `${titleId} ${descId}`, class: "chart" },
    svg("title", { id: titleId }, title),
    svg("desc", { id: descId }, summary),
    drawing,
  );
  return h("figure.report-chart", { id }, picture, h("figcaption", title), table);
}

function table(caption, head, rows) {
  return h(
    "table.report-table",
    h("caption", caption),
    h(
      "thead",
      h(
        "tr",
        head.map((cell) => h("th", { scope: "col" }, cell)),
      ),
    ),
    h(
      "tbody",
      rows.map(([first, ...rest]) =>
        h(
          "tr",
          h("th", { scope: "row" }, first),
          rest.map((cell) => h("td", cell)),
        ),
      ),
    ),
  );
}

function legend() {
  return h(
    "ul.report-legend",
    OUTCOMES.map((name) => h("li", h(`span.swatch.seg-${name}`, { "aria-hidden": "true" }), name)),
  );
}

/** Proposals per day, stacked by outcome. */
function perDayChart(days) {
  const most = Math.max(1, ...days.map((day) => OUTCOMES.reduce((sum, name) => sum + day[name], 0)));
  const slot = WIDTH / Math.max(days.length, 1);
  const bars = days.map((day, index) => {
    let top = HEIGHT;
    return OUTCOMES.filter((name) => day[name] > 0).map((name) => {
      const tall = (day[name] / most) * (HEIGHT - 4);
      top -= tall;
      return svg("rect", {
        x: (index * slot + slot * 0.1).toFixed(2),
        y: top.toFixed(2),
        width: (slot * 0.8).toFixed(2),
        height: tall.toFixed(2),
        class: `seg-${name}`,
      });
    });
  });
  const total = days.reduce((sum, day) => sum + OUTCOMES.reduce((s, name) => s + day[name], 0), 0);
  const rows = days
    .filter((day) => OUTCOMES.some((name) => day[name] > 0))
    .map((day) => [day.date, ...OUTCOMES.map((name) => day[name])]);
  return h(
    "div",
    chart(
      "report-per-day",
      "Proposals per day by outcome",
      `${plural(total, "proposal")} over ${days.length} days; the table lists the days that had any.`,
      svg("g", {}, bars),
      table("Proposals per day", ["Day", ...OUTCOMES], rows.length ? rows : [["No proposals", 0, 0, 0, 0, 0]]),
    ),
    legend(),
  );
}

/** Horizontal bars of named values, longest first. */
function barChart(id, title, summary, items, caption, head, format = (v) => v) {
  const most = Math.max(1e-9, ...items.map((item) => item.value));
  const band = HEIGHT / Math.max(items.length, 1);
  const bars = items.map((item, index) =>
    svg("rect", {
      x: 0,
      y: (index * band + band * 0.15).toFixed(2),
      width: ((item.value / most) * WIDTH).toFixed(2),
      height: (band * 0.7).toFixed(2),
      class: item.kind ? `seg-${item.kind}` : "seg-bar",
    }),
  );
  const rows = items.map((item) => [item.label, format(item.value)]);
  return chart(id, title, summary, svg("g", {}, bars), table(caption, head, rows));
}

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} days`;
}

function beliefList(title, count, items, describe) {
  return h(
    "section.report-section",
    h("h2.list-title", `${title} · ${count}`),
    items.length
      ? h(
          "ul.report-beliefs",
          items.map((item) => h("li", h("p", item.content), h("p.hint", describe(item)))),
        )
      : h("p.hint", "None."),
    count > items.length && h("p.hint", `and ${count - items.length} more`),
  );
}

function render(body, report) {
  const flagged = report.flagged;
  const times = report.time_to_decision;
  return replace(
    body,
    h(
      "p.report-summary",
      `${plural(flagged.proposals, "proposal")} in the last ${report.days} days: ${report.totals.kept} kept, ` +
        `${report.totals.edited} edited, ${report.totals.forgotten} forgotten, ${report.totals.pending} waiting.`,
    ),
    perDayChart(report.per_day),
    barChart(
      "report-flags",
      "Flagged by the gate",
      `${percent(flagged.duplicate_share)} looked like duplicates and ${percent(flagged.contradiction_share)} contradicted kept memory.`,
      [
        { label: "Duplicate", value: flagged.duplicate_share, kind: "forgotten" },
        { label: "Contradiction", value: flagged.contradiction_share, kind: "pending" },
      ],
      "Share of proposals flagged",
      ["Flag", "Share"],
      percent,
    ),
    barChart(
      "report-times",
      "Time to decision",
      `Over ${plural(times.decisions, "decision")}: half within ${duration(times.median_s)}, nine in ten within ${duration(times.p90_s)}.`,
      [
        { label: "Median", value: times.median_s ?? 0, kind: "kept" },
        { label: "90th percentile", value: times.p90_s ?? 0, kind: "edited" },
      ],
      "Time from proposal to decision",
      ["Measure", "Time"],
      duration,
    ),
    barChart(
      "report-reviewers",
      "Who decided",
      report.reviewers.length
        ? report.reviewers.map((r) => `${r.reviewer}: ${r.decisions}`).join(", ")
        : "No decisions in the period.",
      report.reviewers.map((r) => ({ label: r.reviewer, value: r.decisions })),
      "Decisions per reviewer",
      ["Reviewer", "Decisions"],
    ),
    beliefList("Kept but never served in the period", report.unused_count, report.unused, (item) =>
      item.last_served_at ? `last served ${item.last_served_at.slice(0, 10)}` : "never served",
    ),
    beliefList(
      `Faded below ${percent(report.threshold)} confidence`,
      report.fading_count,
      report.fading,
      (item) => `${percent(item.confidence)} when kept, ${percent(item.decayed_confidence)} now`,
    ),
  );
}

export function createReport(ctx) {
  const [body, picker, period] = ["report-body", "report-agent", "report-days"].map((id) =>
    document.getElementById(id),
  );
  replace(
    period,
    PERIODS.map((days) => h("option", { value: String(days) }, `${days} days`)),
  );
  // A weekly digest opens /?view=report&agent=…&days=7: that agent and period, once.
  const asked = new URLSearchParams(location.search);
  period.value = PERIODS.includes(Number(asked.get("days"))) ? asked.get("days") : "30";
  let askedAgent = asked.get("agent");
  const chosenAgent = () => ctx.agentFilter() || picker.value || ctx.agentIds()[0];
  picker.addEventListener("change", () => refresh());
  period.addEventListener("change", () => refresh());

  async function refresh() {
    const ids = ctx.agentIds();
    picker.hidden = Boolean(ctx.agentFilter()) || ids.length < 2;
    if (picker.options.length !== ids.length) {
      replace(
        picker,
        ids.map((id) => h("option", { value: id }, ctx.agentName(id))),
      );
    }
    if (askedAgent && ids.length) {
      if (ids.includes(askedAgent)) picker.value = askedAgent;
      askedAgent = null;
    }
    const agent = chosenAgent();
    if (!agent) return replace(body, h("p.hint", "No agent yet."));
    const { body: report } = await api(
      `/agents/${encodeURIComponent(agent)}/memory/report?days=${encodeURIComponent(period.value)}`,
    );
    render(body, report);
  }

  return { refresh };
}
