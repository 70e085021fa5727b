// Settings for the person behind this device: their name (History shows it) and when they are told
// about beliefs waiting for review (digest or each, quiet hours, reminders, snooze, the weekly report).
import { api } from "./api.js";
import { button, h, toast } from "./dom.js";

const section = (title, ...children) => h("section.panel", h("h2", title), ...children);
const HOUR = 3600 * 1000;
const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

function field(id, label, control, hint) {
  return h("div.field", h("label", { for: id }, label), control, hint && h("p.hint", hint));
}

function snoozeChoices() {
  const tomorrow = new Date();
  tomorrow.setDate(tomorrow.getDate() + 1);
  tomorrow.setHours(8, 0, 0, 0);
  return [
    ["1 hour", new Date(Date.now() + HOUR)],
    ["Until tomorrow", tomorrow],
    ["1 week", new Date(Date.now() + 7 * 24 * HOUR)],
  ];
}

/** The "You" and "When to notify" panels; null when the server does not answer (offline). */
export async function reviewerSections(ctx) {
  let settings;
  try {
    settings = (await api("/me/notifications")).body;
  } catch {
    return [];
  }
  const me = ctx.me() || {};
  const name = h("input", { id: "reviewer-name", type: "text", maxlength: "80", value: me.reviewer_name || "" });
  const saveName = button(
    "act",
    async () => {
      try {
        const { body } = await api("/me", { method: "PATCH", body: { name: name.value } });
        if (ctx.me()) Object.assign(ctx.me(), body);
        toast(`History now shows your decisions as ${body.reviewer_name}`, { tone: "keep" });
      } catch (error) {
        toast(error.detail || error.message, { tone: "warn" });
      }
    },
    "Save name",
  );

  const mode = h(
    "select",
    { id: "notify-mode" },
    h("option", { value: "digest" }, "One digest per batch (recommended)"),
    h("option", { value: "each" }, "Every belief on its own"),
  );
  mode.value = settings.mode;
  const quietOn = h("input", { id: "quiet-on", type: "checkbox", checked: Boolean(settings.quiet_hours) });
  const quiet = settings.quiet_hours || {
    start: "22:00",
    end: "07:00",
    time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC",
    allow_high: false,
  };
  const start = h("input", { id: "quiet-start", type: "time", value: quiet.start });
  const end = h("input", { id: "quiet-end", type: "time", value: quiet.end });
  const zone = h("input", { id: "quiet-zone", type: "text", value: quiet.time_zone });
  const allowHigh = h("input", { id: "quiet-high", type: "checkbox", checked: quiet.allow_high });
  const remind = h("input", {
    id: "remind-hours",
    type: "number",
    min: "1",
    step: "1",
    value: String(settings.remind_after_hours),
  });
  const spacing = h("input", {
    id: "digest-spacing",
    type: "number",
    min: "0",
    max: "24",
    step: "0.5",
    value: String((settings.digest_spacing_minutes ?? 720) / 60),
  });
  const weeklySetting = settings.weekly_report || { enabled: true, weekday: "monday", hour: 9 };
  const weeklyDay = h(
    "select",
    { id: "weekly-day" },
    h("option", { value: "off" }, "Off"),
    WEEKDAYS.map((day) => h("option", { value: day }, `Every ${day[0].toUpperCase()}${day.slice(1)}`)),
  );
  weeklyDay.value = weeklySetting.enabled ? weeklySetting.weekday : "off";
  const weeklyHour = h("input", {
    id: "weekly-hour",
    type: "number",
    min: "0",
    max: "23",
    step: "1",
    value: String(weeklySetting.hour),
  });
  const snoozed = h("p", { id: "snooze-state" }, snoozeText(settings.snooze_until));

  function current(snoozeUntil = settings.snooze_until) {
    return {
      mode: mode.value,
      quiet_hours: quietOn.checked
        ? { start: start.value, end: end.value, time_zone: zone.value.trim(), allow_high: allowHigh.checked }
        : null,
      remind_after_hours: Number.parseInt(remind.value, 10),
      digest_spacing_minutes: Math.round(Number.parseFloat(spacing.value) * 60),
      snooze_until: snoozeUntil,
      weekly_report: {
        enabled: weeklyDay.value !== "off",
        weekday: weeklyDay.value === "off" ? weeklySetting.weekday : weeklyDay.value,
        hour: Number.parseInt(weeklyHour.value, 10),
      },
    };
  }

  async function save(snoozeUntil) {
    try {
      const { body } = await api("/me/notifications", { method: "PUT", body: current(snoozeUntil) });
      settings = body;
      snoozed.textContent = snoozeText(body.snooze_until);
      toast("Notification settings saved", { tone: "keep" });
    } catch (error) {
      toast(`Not saved: ${error.detail || error.message}`, { tone: "warn", timeout: 10000 });
    }
  }

  const snoozeButtons = snoozeChoices().map(([label, until]) =>
    button("act", () => save(until.toISOString().replace(/\.\d{3}Z$/, "Z")), `Snooze ${label.toLowerCase()}`),
  );
  return [
    section(
      "You",
      field("reviewer-name", "Your name", name, "History and the audit trail name you and the device you decided on."),
      saveName,
    ),
    section(
      "When to notify",
      field(
        "notify-mode",
        "Notifications",
        mode,
        "A belief that changes or contradicts a kept one always comes alone.",
      ),
      field(
        "digest-spacing",
        "Digests at most every (hours)",
        spacing,
        "A belief that arrives on its own waits for the next digest; a nightly run's batch comes when the run ends.",
      ),
      h("div.field", h("label", { for: "quiet-on" }, quietOn, " Quiet hours")),
      field("quiet-start", "From", start),
      field("quiet-end", "To", end),
      field("quiet-zone", "Time zone", zone, "An IANA zone such as Europe/Berlin."),
      h("div.field", h("label", { for: "quiet-high" }, allowHigh, " Let urgent ones through")),
      field("remind-hours", "Remind me after (hours)", remind),
      field(
        "weekly-day",
        "Weekly report",
        weeklyDay,
        "Each of your agents' week: kept, edited, forgotten, pending, time to decide, kept but never used.",
      ),
      field("weekly-hour", "Hour of the weekly report", weeklyHour, "0 to 23, in the quiet-hours zone (UTC without)."),
      button("act", () => save(settings.snooze_until), "Save notification settings"),
      snoozed,
      h("div.row-actions", snoozeButtons, settings.snooze_until && button("act", () => save(null), "End snooze")),
    ),
  ];
}

/** For admins: who reviews each agent, with a checkbox per reviewer (assign / unassign). */
export async function routingSection(ctx) {
  const me = ctx.me() || {};
  if (me.scope !== "admin") return null;
  const blocks = [];
  for (const agent of ctx.agents()) {
    let items;
    try {
      items = (await api(`/agents/${encodeURIComponent(agent.id)}/reviewers`)).body.items;
    } catch {
      return null;
    }
    const rows = items.map((reviewer) => {
      const id = `route-${agent.id}-${reviewer.id}`;
      const box = h("input", { type: "checkbox", id, checked: reviewer.reviews });
      box.addEventListener("change", async () => {
        const path = `/agents/${encodeURIComponent(agent.id)}/reviewers/${encodeURIComponent(reviewer.id)}`;
        try {
          await api(path, { method: box.checked ? "PUT" : "DELETE" });
          toast(`${reviewer.name || reviewer.id} ${box.checked ? "now reviews" : "no longer reviews"} ${agent.name}`, {
            tone: "keep",
          });
        } catch (error) {
          box.checked = !box.checked;
          toast(error.detail || error.message, { tone: "warn" });
        }
      });
      return h("li", h("label", { for: id }, box, ` ${reviewer.name || reviewer.id}`));
    });
    blocks.push(h("h3", agent.name), rows.length ? h("ul.routing", rows) : h("p.hint", "No reviewer can see it."));
  }
  return section("Who reviews which agent", ...blocks);
}

function snoozeText(until) {
  if (!until || new Date(until) <= new Date()) return "Not snoozed.";
  return `Snoozed until ${new Date(until).toLocaleString()}.`;
}
