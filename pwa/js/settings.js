// The Settings view: this device, notifications, keyboard, the offline queue, unpairing.
import { clearAuth, currentAuth, db } from "./api.js";
import { button, h, plural, replace, SHORTCUTS_KEY, shortcutsOn, toast } from "./dom.js";
import * as push from "./push.js";
import { reviewerSections, routingSection } from "./reviewer.js";

const ACTIONS = { keep: "Keep", forget: "Forget", edit: "Edit", reopen: "Undo" };
const section = (title, ...children) => h("section.panel", h("h2", title), ...children);

export function createSettings(ctx) {
  const root = document.getElementById("settings-body");

  async function refresh() {
    const info = ctx.me() || currentAuth()?.info || {};
    const queued = await db.outbox();
    const waiting = queued.length;
    const person = await reviewerSections(ctx);
    const routing = await routingSection(ctx);
    replace(
      root,
      section(
        "This device",
        h(
          "dl.facts",
          h("dt", "Paired as"),
          h("dd", info.label || "reviewer"),
          h("dt", "Can review"),
          h("dd", info.agents ? info.agents.map(ctx.agentName).join(", ") : "every agent"),
          h("dt", "Key"),
          h("dd", h("code", `${info.key_id || info.id} (${info.scope || "reviewer"})`)),
        ),
      ),
      ...person,
      routing,
      section("Notifications", ...notifications(await push.status())),
      section("Keyboard", shortcutsToggle()),
      section(
        "Offline",
        h("p", waiting ? `${plural(waiting, "decision")} waiting to sync:` : "Everything is synced."),
        waiting > 0 &&
          h(
            "ul.waiting",
            queued.map((entry) => h("li", h("b", `${ACTIONS[entry.action]}: `), entry.content || entry.belief_id)),
          ),
        waiting > 0 && button("act", () => ctx.sync(), "Sync now"),
        h(
          "p.hint",
          "Decisions made without a connection are kept on this device and sent, once each, when it is back.",
        ),
      ),
      section(
        "Unpair",
        h("p", "Forget this device's key. Pair again with a new code from ", h("code", "credence pair"), "."),
        unpairButton(waiting),
      ),
    );
  }

  function notifications(state) {
    const blocks = [];
    if (push.isIOS() && !push.isStandalone()) {
      blocks.push(
        h(
          "p.callout",
          "On iPhone and iPad, notifications work once Credence is on your Home Screen: tap Share, then “Add to Home Screen”, and open Credence from there.",
        ),
      );
    }
    if (!state.supported)
      return [
        ...blocks,
        h("p", "This browser cannot receive push notifications here. (They need HTTPS, or localhost.)"),
      ];
    if (state.permission === "denied")
      return [
        ...blocks,
        h("p", "Notifications are blocked for this site. Allow them in the browser's site settings, then come back."),
      ];
    if (state.subscribed && state.permission === "granted") {
      return [
        ...blocks,
        h("p", "On. Each new belief to review arrives with Keep and Forget right on the notification."),
        h("div.row", button("act", sendTest, "Send test notification"), button("act", turnOff, "Turn off")),
      ];
    }
    return [
      ...blocks,
      h("p", "Get “I've learned: …” on this device the moment a belief needs you."),
      button("act.primary", turnOn, "Enable notifications"),
    ];
  }

  async function turnOn(event) {
    event.target.disabled = true;
    event.target.textContent = "Asking the browser…";
    try {
      const ok = await push.enable();
      toast(ok ? "Notifications are on" : "Notifications were not allowed", { tone: ok ? "keep" : "warn" });
    } catch (error) {
      toast(`Could not turn on notifications: ${error.message}`, { tone: "warn" });
    }
    refresh();
  }

  async function turnOff() {
    await push.disable();
    toast("Notifications are off for this device");
    refresh();
  }

  async function sendTest() {
    try {
      await push.sendTest();
      toast("Test sent: it should arrive in a few seconds");
    } catch (error) {
      toast(`Could not send a test: ${error.message}`, { tone: "warn" });
    }
  }

  function shortcutsToggle() {
    const box = h("input", { type: "checkbox", id: "shortcuts-on", checked: shortcutsOn() });
    box.addEventListener("change", () => {
      localStorage.setItem(SHORTCUTS_KEY, box.checked ? "on" : "off");
      ctx.shortcutsChanged();
    });
    return h(
      "div",
      h("label.check", box, " Single-key shortcuts in Review (K keep, F forget, E edit, U undo, arrows)"),
      h("p.hint", "Turn them off if you use speech input or keys get pressed by accident."),
    );
  }

  function unpairButton(waiting) {
    let armed = false;
    const el = button(
      "act.act-forget",
      async () => {
        if (!armed) {
          armed = true;
          el.textContent = waiting ? `Unpair and drop ${plural(waiting, "unsynced decision")}` : "Tap again to unpair";
          return;
        }
        await push.disable().catch(() => null);
        for (const entry of await db.outbox()) await db.dequeue(entry.id);
        await clearAuth();
        ctx.unpaired();
      },
      "Unpair this device",
    );
    return el;
  }

  return { refresh };
}
