// Pairing (one-time code -> reviewer key in IndexedDB), and the Settings view.
import { api, ApiError, clearAuth, currentAuth, db, OfflineError, saveAuth } from "./api.js";
import { h, replace, toast } from "./dom.js";
import * as push from "./push.js";

/** The code inside a pasted pairing link, or the text itself when it is a bare code. */
export function codeFrom(text) {
  const value = text.trim();
  try {
    const url = new URL(value);
    return url.searchParams.get("pair") || "";
  } catch {
    return value;
  }
}

/** Exchange a pairing code for a reviewer key; resolves to the key's info, throws with words. */
export async function pair(code) {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(code)) {
    throw new Error("That is not a pairing code. Run `credence pair` and open the link it prints.");
  }
  let body;
  try {
    ({ body } = await api("/pair", { method: "POST", body: { code }, anonymous: true }));
  } catch (error) {
    if (error instanceof OfflineError) throw new Error("Cannot reach the Credence server. Check the connection and try again.");
    if (error instanceof ApiError && error.status === 410) throw new Error(`${capitalise(error.detail)}.`);
    if (error instanceof ApiError && error.status === 429) throw new Error("Too many pairing attempts. Wait a minute and try again.");
    throw error;
  }
  await saveAuth({ key: body.key, info: body.info, paired_at: new Date().toISOString() });
  return body.info;
}

const capitalise = (text) => text.charAt(0).toUpperCase() + text.slice(1);

export function createPairView({ onPaired }) {
  const form = document.getElementById("pair-form");
  const error = document.getElementById("pair-error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button");
    button.disabled = true;
    try {
      await pair(codeFrom(form.elements.code.value));
      form.reset();
      error.hidden = true;
      onPaired();
    } catch (failure) {
      showError(failure.message);
    } finally {
      button.disabled = false;
    }
  });
  function showError(message) {
    error.textContent = message;
    error.hidden = !message;
  }
  return { showError };
}

export function createSettings(ctx) {
  const root = document.getElementById("settings-body");

  async function refresh() {
    const auth = currentAuth();
    const info = ctx.me() || auth?.info || {};
    const state = await push.status();
    const waiting = (await db.outbox()).length;
    replace(
      root,
      section(
        "This device",
        h(
          "dl",
          { class: "facts" },
          h("dt", {}, "Paired as"),
          h("dd", {}, info.label || "reviewer"),
          h("dt", {}, "Can review"),
          h("dd", {}, info.agents ? info.agents.map(ctx.agentName).join(", ") : "every agent"),
          h("dt", {}, "Key"),
          h("dd", {}, h("code", {}, `${info.key_id || info.id || "?"} (${info.scope || "reviewer"})`)),
        ),
      ),
      section("Notifications", ...notificationBlock(state)),
      section(
        "Offline",
        h("p", {}, waiting ? `${waiting} decision${waiting === 1 ? "" : "s"} waiting to sync.` : "Everything is synced."),
        waiting ? h("button", { type: "button", class: "act", onclick: () => ctx.sync() }, "Sync now") : null,
        h("p", { class: "hint" }, "Decisions made without a connection are kept on this device and sent, once each, when it is back."),
      ),
      section(
        "Unpair",
        h("p", {}, "Forget this device's key. Pair again with a new code from `credence pair`."),
        unpairButton(waiting),
      ),
    );
  }

  function notificationBlock(state) {
    const blocks = [];
    if (push.isIOS() && !push.isStandalone()) {
      blocks.push(
        h("p", { class: "callout" }, "On iPhone and iPad, notifications work once Credence is on your Home Screen: tap Share, then “Add to Home Screen”, and open Credence from there."),
      );
    }
    if (!state.supported) {
      blocks.push(h("p", {}, "This browser cannot receive push notifications here. (They need HTTPS, or localhost.)"));
      return blocks;
    }
    if (state.permission === "denied") {
      blocks.push(h("p", {}, "Notifications are blocked for this site. Allow them in the browser's site settings, then come back."));
      return blocks;
    }
    if (state.subscribed && state.permission === "granted") {
      blocks.push(
        h("p", {}, "On. Each new belief to review arrives with Keep and Forget right on the notification."),
        h("div", { class: "row" },
          h("button", { type: "button", class: "act", onclick: sendTest }, "Send test notification"),
          h("button", { type: "button", class: "act", onclick: turnOff }, "Turn off"),
        ),
      );
      return blocks;
    }
    blocks.push(
      h("p", {}, "Get “I've learned: …” on this device the moment a belief needs you."),
      h("button", { type: "button", class: "act primary", onclick: turnOn }, "Enable notifications"),
    );
    return blocks;
  }

  async function turnOn(event) {
    event.target.disabled = true;
    event.target.textContent = "Asking the browser…";
    try {
      const result = await push.enable();
      toast(result.ok ? "Notifications are on" : "Notifications were not allowed", { tone: result.ok ? "keep" : "warn" });
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
      toast("Test sent — it should arrive in a few seconds");
    } catch (error) {
      toast(`Could not send a test: ${error.message}`, { tone: "warn" });
    }
  }

  function unpairButton(waiting) {
    let armed = false;
    const button = h("button", { type: "button", class: "act act-forget" }, "Unpair this device");
    button.addEventListener("click", async () => {
      if (!armed) {
        armed = true;
        button.textContent = waiting ? `Unpair and drop ${waiting} unsynced decision${waiting === 1 ? "" : "s"}` : "Tap again to unpair";
        return;
      }
      await push.disable().catch(() => null);
      for (const item of await db.outbox()) await db.dequeue(item.id);
      await clearAuth();
      ctx.unpaired();
    });
    return button;
  }

  return { refresh };
}

function section(title, ...children) {
  return h("section", { class: "panel" }, h("h2", {}, title), ...children);
}
