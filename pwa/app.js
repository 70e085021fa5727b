// Credence review app: boot, pairing, views, navigation, sync status and service-worker glue.
import { api, ApiError, clearAuth, currentAuth, db, loadAuth, OfflineError } from "./js/api.js";
import { h, hideToast, replace, toast } from "./js/dom.js";
import { createHistory, createMemory } from "./js/memory.js";
import * as push from "./js/push.js";
import { createReview } from "./js/review.js";
import { createRuns } from "./js/runs.js";
import { createPairView, createSettings, pair } from "./js/settings.js";

const VIEWS = ["review", "memory", "history", "runs", "settings"];
const FILTER_KEY = "credence.agentFilter";
const STALE_MS = 30000;

const state = { me: null, agents: new Map(), view: null, refreshedAt: 0, installPrompt: null };

const ctx = {
  me: () => state.me,
  agentIds: () => [...state.agents.keys()],
  agentName: (id) => state.agents.get(id)?.name || id,
  agentLambda: (id) => state.agents.get(id)?.reflection?.lambda_per_day ?? 0.02,
  agentFilter: () => {
    const value = localStorage.getItem(FILTER_KEY) || "";
    return state.agents.has(value) ? value : "";
  },
  pendingChanged,
  outboxChanged,
  reviewChanged: () => review.refresh().catch(showFailure),
  go,
  sync: () => sync(),
  unpaired: () => showPairing("This device is unpaired."),
};

const review = createReview(ctx);
const memory = createMemory(ctx);
const historyView = createHistory(ctx);
const runs = createRuns(ctx);
const settings = createSettings(ctx);
const pairView = createPairView({ onPaired: () => start({ welcome: true }) });
const refreshers = { review: () => review.refresh(), memory: memory.refresh, history: historyView.refresh, runs: runs.refresh, settings: settings.refresh };

// --- boot ------------------------------------------------------------------------------

async function boot() {
  registerWorker();
  wireChrome();
  await loadAuth();
  const params = new URLSearchParams(location.search);
  const code = params.get("pair");
  if (code) {
    params.delete("pair");
    history.replaceState(null, "", params.size ? `/?${params}` : "/");
    try {
      await pair(code);
    } catch (error) {
      return showPairing(null, error.message);
    }
    return start({ welcome: true });
  }
  if (!currentAuth()) return showPairing();
  return start();
}

async function start({ welcome = false } = {}) {
  document.body.classList.remove("unpaired");
  document.getElementById("view-pair").hidden = true;
  document.getElementById("tabs").hidden = false;
  const [me, agents] = await Promise.allSettled([api("/me"), api("/agents?limit=200")]);
  if (me.status === "rejected" && me.reason instanceof ApiError && me.reason.status === 401) {
    await clearAuth();
    return showPairing("This device's key is no longer accepted (it may have been revoked). Pair it again.");
  }
  if (me.status === "fulfilled") state.me = me.value.body;
  if (agents.status === "fulfilled") {
    state.agents = new Map(agents.value.body.items.map((agent) => [agent.id, agent]));
  }
  renderAgentFilter();
  if (welcome) toast("Paired. This device can now review beliefs.", { tone: "keep" });
  await route();
  sync();
  push.resend().catch(() => null);
}

function showPairing(message = null, error = null) {
  document.body.classList.add("unpaired");
  for (const view of VIEWS) document.getElementById(`view-${view}`).hidden = true;
  document.getElementById("tabs").hidden = true;
  document.getElementById("agent-filter-wrap").hidden = true;
  document.getElementById("view-pair").hidden = false;
  document.getElementById("pair-message").textContent = message || "";
  document.getElementById("pair-message").hidden = !message;
  pairView.showError(error);
  hideToast();
}

// --- views -----------------------------------------------------------------------------

async function route() {
  const params = new URLSearchParams(location.search);
  const view = VIEWS.includes(params.get("view")) ? params.get("view") : "review";
  const belief = params.get("belief");
  show(view);
  if (view === "review" && belief) {
    history.replaceState(null, "", "/");
    return review.open(belief).catch(showFailure);
  }
  return refreshCurrent();
}

function go(view) {
  const url = view === "review" ? "/" : `/?view=${view}`;
  if (location.pathname + location.search !== url) history.pushState(null, "", url);
  show(view);
  return refreshCurrent();
}

function show(view) {
  state.view = view;
  for (const name of VIEWS) document.getElementById(`view-${name}`).hidden = name !== view;
  for (const link of document.querySelectorAll("#tabs a")) {
    if (link.dataset.view === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.title = view === "review" ? "Credence" : `${link(view)} · Credence`;
}

const link = (view) => view.charAt(0).toUpperCase() + view.slice(1);

async function refreshCurrent() {
  state.refreshedAt = Date.now();
  try {
    await refreshers[state.view]();
  } catch (error) {
    showFailure(error);
  }
}

async function showFailure(error) {
  if (error instanceof ApiError && error.status === 401) {
    await clearAuth();
    return showPairing("This device's key is no longer accepted (it may have been revoked). Pair it again.");
  }
  const message = error instanceof OfflineError ? "You are offline. Showing what this device knows; decisions will sync later." : error.message;
  toast(message, { tone: error instanceof OfflineError ? "offline" : "warn", timeout: 8000 });
}

function renderAgentFilter() {
  const wrap = document.getElementById("agent-filter-wrap");
  const select = document.getElementById("agent-filter");
  wrap.hidden = state.agents.size < 2;
  replace(
    select,
    h("option", { value: "" }, "All agents"),
    [...state.agents.values()].map((agent) => h("option", { value: agent.id }, agent.name)),
  );
  select.value = ctx.agentFilter();
}

// --- counts, sync, badge -----------------------------------------------------------------

function pendingChanged(count, more) {
  const badge = document.getElementById("pending-count");
  badge.textContent = count ? `${count}${more ? "+" : ""}` : "";
  badge.hidden = !count;
  push.setBadge(count);
}

async function outboxChanged({ sync: wantSync = false } = {}) {
  const waiting = (await db.outbox()).length;
  const pill = document.getElementById("sync-status");
  pill.hidden = !waiting;
  pill.textContent = `${waiting} waiting to sync`;
  if (wantSync && waiting) requestBackgroundSync();
  return waiting;
}

async function requestBackgroundSync() {
  try {
    const registration = await navigator.serviceWorker?.ready;
    await registration?.sync?.register("credence-outbox");
  } catch {
    // Background Sync is optional: the page replays on 'online' and on start anyway.
  }
}

async function sync() {
  if (!currentAuth()) return;
  const report = await db.replay().catch(() => null);
  await outboxChanged();
  const problems = await db.takeProblems();
  if (report?.sent.length) {
    toast(`Synced ${report.sent.length} decision${report.sent.length === 1 ? "" : "s"} made offline`, { tone: "keep" });
  }
  if (problems.length) {
    const first = problems[0];
    toast(`${problems.length} offline decision${problems.length === 1 ? "" : "s"} could not be applied: ${first.detail}`, { tone: "warn", timeout: 10000 });
  }
  if (report?.sent.length || problems.length) review.refresh().catch(() => null);
}

// --- chrome: nav, keys, network, service worker ------------------------------------------

function wireChrome() {
  document.getElementById("tabs").addEventListener("click", (event) => {
    const target = event.target.closest("a[data-view]");
    if (!target || event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    go(target.dataset.view);
  });
  addEventListener("popstate", () => currentAuth() && route());
  document.getElementById("agent-filter").addEventListener("change", (event) => {
    localStorage.setItem(FILTER_KEY, event.target.value);
    refreshCurrent();
  });
  document.getElementById("sync-status").addEventListener("click", () => sync());
  document.addEventListener("keydown", (event) => {
    if (state.view === "review" && !document.body.classList.contains("unpaired") && review.onKey(event)) {
      event.preventDefault();
    }
  });
  const offline = document.getElementById("offline-badge");
  const network = () => (offline.hidden = navigator.onLine);
  network();
  addEventListener("offline", network);
  addEventListener("online", () => {
    network();
    sync();
  });
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState !== "visible" || !currentAuth()) return;
    sync();
    if (Date.now() - state.refreshedAt > STALE_MS && state.view === "review") refreshCurrent();
  });
  addEventListener("beforeinstallprompt", (event) => {
    event.preventDefault();
    state.installPrompt = event;
    document.getElementById("install").hidden = false;
  });
  document.getElementById("install").addEventListener("click", async () => {
    const prompt = state.installPrompt;
    state.installPrompt = null;
    document.getElementById("install").hidden = true;
    if (prompt) await prompt.prompt();
  });
}

function registerWorker() {
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register("/sw.js", { scope: "/", updateViaCache: "none" }).catch(() => null);
  navigator.serviceWorker.addEventListener("message", (event) => {
    const message = event.data || {};
    if (!currentAuth()) return;
    if (message.type === "open-belief") {
      show("review");
      review.open(message.belief_id).catch(showFailure);
    } else if (message.type === "belief.pending" && state.view === "review") {
      review.refresh().catch(() => null);
    } else if (message.type === "decided") {
      review.removeDecided([message.belief_id]);
    } else if (message.type === "outbox") {
      outboxChanged();
    }
  });
}

boot().catch(showFailure);
