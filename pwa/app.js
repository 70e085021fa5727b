// Credence review app: boot, pairing, views, navigation, sync status and service-worker glue.
import { api, clearAuth, currentAuth, db, loadAuth, OfflineError, whenUnauthorized } from "./js/api.js";
import { h, hideToast, plural, replace, shortcutsOn, toast } from "./js/dom.js";
import { createPairView, pair } from "./js/pair.js";
import { createReview } from "./js/review.js";

const VIEWS = ["review", "inbox", "memory", "history", "runs", "report", "settings"];
const FILTER_KEY = "credence.agentFilter";
const STALE_MS = 30000;
// While the last load failed, try again: 2 s, 4 s, 8 s … up to a minute, each delay shortened by
// up to half at random so many devices do not come back all at once.
const RETRY_BASE_MS = 2000;
const RETRY_CAP_MS = 60000;
// While decisions wait on this device the page polls faster (1 s, 2 s, then every 3–4 s), so the
// queue heals within 5 s of the server answering again; one failed fetch per poll is cheap.
const HEAL_BASE_MS = 1000;
const HEAL_CAP_MS = 4000;
const REVOKED = "This device's key is no longer accepted (it may have been revoked). Pair it again.";
const $ = (id) => document.getElementById(id);

const state = {
  me: null,
  agents: new Map(),
  view: null,
  refreshedAt: 0,
  failing: false,
  retries: 0,
  retryTimer: null,
  retryAt: 0,
  waiting: 0,
};

const ctx = {
  me: () => state.me,
  agents: () => [...state.agents.values()],
  agentIds: () => [...state.agents.keys()],
  agentName: (id) => state.agents.get(id)?.name || id,
  agentLambda: (id) => state.agents.get(id)?.reflection.lambda_per_day ?? 0.02,
  agentFilter: () => {
    const value = localStorage.getItem(FILTER_KEY);
    return state.agents.has(value) ? value : "";
  },
  pendingChanged,
  outboxChanged,
  failed: (error) => {
    state.failing = true;
    network(error instanceof OfflineError && !error.offline);
    scheduleRetry();
  },
  reviewChanged: () => review.refresh().catch(showFailure),
  go,
  sync,
  shortcutsChanged,
  unpaired: () => showPairing("This device is unpaired."),
};

const review = createReview(ctx);
const views = { review: Promise.resolve(review) };
// Only the review stack is in the first load; the other views load when first opened.
const LOADERS = {
  inbox: () => import("./js/inbox.js").then((m) => m.createInbox(ctx)),
  memory: () => import("./js/memory.js").then((m) => m.createMemory(ctx)),
  history: () => import("./js/memory.js").then((m) => m.createHistory(ctx)),
  runs: () => import("./js/runs.js").then((m) => m.createRuns(ctx)),
  report: () => import("./js/report.js").then((m) => m.createReport(ctx)),
  settings: () => import("./js/settings.js").then((m) => m.createSettings(ctx)),
};
// The promise is kept, so two quick refreshes never build (and wire) a view twice.
const view = (name) => (views[name] ||= LOADERS[name]());
const push = () => import("./js/push.js");
const pairView = createPairView({ onPaired: () => start({ welcome: true }) });

// --- boot

async function boot() {
  whenUnauthorized(unauthorized);
  shortcutsChanged();
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
  return currentAuth() ? start() : showPairing();
}

async function start({ welcome = false } = {}) {
  document.body.classList.remove("unpaired");
  $("view-pair").hidden = true;
  $("tabs").hidden = false;
  const [me, agents] = await Promise.allSettled([api("/me"), api("/agents?limit=200")]);
  if (me.reason?.status === 401) return;
  if (me.value) state.me = me.value.body;
  if (agents.value) state.agents = new Map(agents.value.body.items.map((agent) => [agent.id, agent]));
  renderAgentFilter();
  if (welcome) toast("Paired. This device can now review beliefs.", { tone: "keep" });
  await route();
  if (state.view !== "review") review.refresh().catch(() => null); // the pending count in the tab
  sync();
  push()
    .then((p) => p.resend())
    .catch(() => null);
}

function showPairing(message = null, error = null) {
  document.body.classList.add("unpaired");
  for (const view of VIEWS) $(`view-${view}`).hidden = true;
  $("tabs").hidden = true;
  $("agent-filter-wrap").hidden = true;
  $("view-pair").hidden = false;
  $("pair-message").textContent = message || "";
  $("pair-message").hidden = !message;
  pairView.showError(error);
  hideToast();
}

// --- views

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
  for (const name of VIEWS) $(`view-${name}`).hidden = name !== view;
  const tab = view === "inbox" ? "review" : view; // the inbox is the review pile as a list
  for (const link of $("tabs").querySelectorAll("a")) {
    if (link.dataset.view === tab) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.title = view === "review" ? "Credence" : `${view[0].toUpperCase()}${view.slice(1)} · Credence`;
}

async function refreshCurrent() {
  state.refreshedAt = Date.now();
  try {
    await (await view(state.view)).refresh();
    if (state.view !== "review" || $("review-error").hidden) recovered();
  } catch (error) {
    showFailure(error);
  }
}

async function showFailure(error) {
  if (error.status === 401) return;
  const unreachable = error instanceof OfflineError;
  if (unreachable) ctx.failed(error);
  const message = unreachable
    ? `${error.message} Decisions you make now sync when the connection is back.`
    : error.message;
  toast(message, { tone: unreachable ? "offline" : "warn", timeout: 8000 });
}

async function unauthorized() {
  if (!currentAuth()) return;
  await clearAuth();
  showPairing(REVOKED);
}

function renderAgentFilter() {
  $("agent-filter-wrap").hidden = state.agents.size < 2;
  const options = [...state.agents.values()].map((agent) => h("option", { value: agent.id }, agent.name));
  replace($("agent-filter"), h("option", { value: "" }, "All agents"), options);
  $("agent-filter").value = ctx.agentFilter();
}

function shortcutsChanged() {
  $("review-hints").hidden = !shortcutsOn();
}

// --- counts, sync, badge

function pendingChanged(count, more) {
  $("pending-count").textContent = count ? `${count}${more ? "+" : ""}` : "";
  $("pending-count").hidden = !count;
  $("pending-label").textContent = count ? `(${count}${more ? " or more" : ""} to review)` : "";
  // App badge = pending count, where the Badging API exists.
  if ("setAppBadge" in navigator) (count ? navigator.setAppBadge(count) : navigator.clearAppBadge()).catch(() => null);
}

async function outboxChanged({ sync: wantSync = false } = {}) {
  const waiting = (await db.outbox()).length;
  state.waiting = waiting;
  $("sync-status").hidden = !waiting;
  $("sync-status").textContent = `${waiting} waiting to sync`;
  if (waiting) scheduleRetry(); // the page itself replays: Background Sync may wait minutes
  if (wantSync && waiting) {
    // Background Sync (where it exists) replays even if this page closes first.
    navigator.serviceWorker?.ready
      .then((registration) => registration.sync?.register("credence-outbox"))
      .catch(() => null);
  }
}

/** Replay the outbox (also run by the service worker); tell what happened to each decision. */
async function sync() {
  if (!currentAuth()) return;
  const report = await db.replay().catch(() => null);
  if (report?.unauthorized) return unauthorized();
  await synced(report?.sent.length || 0);
  if ((await db.outbox()).length) scheduleRetry();
}

/** Try again later: soon while decisions wait (HEAL_*), with a widening gap while only a load failed.
 * A pending retry further away than the one now wanted is brought forward. */
function scheduleRetry() {
  if (!currentAuth()) return;
  const [base, cap, spread] = state.waiting ? [HEAL_BASE_MS, HEAL_CAP_MS, 0.25] : [RETRY_BASE_MS, RETRY_CAP_MS, 0.5];
  const delay = Math.min(cap, base * 2 ** state.retries) * (1 - spread * Math.random());
  if (state.retryTimer && state.retryAt <= Date.now() + delay) return;
  clearTimeout(state.retryTimer);
  state.retries += 1;
  state.retryAt = Date.now() + delay;
  state.retryTimer = setTimeout(retryNow, delay);
}

async function retryNow() {
  clearTimeout(state.retryTimer);
  state.retryTimer = null;
  state.retryAt = 0;
  await sync();
  if (state.failing) await refreshCurrent();
  if (!state.failing && !(await db.outbox()).length) state.retries = 0;
}

function recovered() {
  state.failing = false;
  network();
}

async function synced(sent) {
  await outboxChanged();
  const problems = await db.takeProblems();
  if (sent) toast(`Synced ${plural(sent, "decision")} made offline`, { tone: "keep" });
  if (problems.length) {
    const message = `${plural(problems.length, "offline decision")} could not be applied: ${problems[0].detail}`;
    toast(message, { tone: "warn", timeout: 10000 });
  }
  if (sent || problems.length) review.refresh().catch(() => null);
}

// --- chrome: nav, keys, network, service worker

function wireChrome() {
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-view]");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    go(link.dataset.view);
  });
  addEventListener("popstate", () => currentAuth() && route());
  $("agent-filter").addEventListener("change", (event) => {
    localStorage.setItem(FILTER_KEY, event.target.value);
    refreshCurrent();
  });
  $("sync-status").addEventListener("click", retryNow);
  document.addEventListener("keydown", (event) => {
    if (state.view === "review" && !document.body.classList.contains("unpaired") && review.onKey(event))
      event.preventDefault();
  });
  network();
  addEventListener("offline", () => network());
  addEventListener("online", () => {
    network();
    retryNow();
  });
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState !== "visible" || !currentAuth()) return;
    sync();
    if (Date.now() - state.refreshedAt > STALE_MS && state.view === "review") refreshCurrent();
  });
}

/** The status pill: "Offline" (no network) or "Server unreachable" (network, but no answer). */
function network(unreachable = state.failing) {
  const offline = !navigator.onLine;
  $("offline-badge").hidden = !offline && !unreachable;
  $("offline-badge").textContent = offline ? "Offline" : "Server unreachable";
}

function registerWorker() {
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register("/sw.js", { scope: "/", updateViaCache: "none" }).catch(() => null);
  navigator.serviceWorker.addEventListener("message", ({ data }) => {
    if (!currentAuth() || !data) return;
    if (data.type === "open-belief") {
      show("review");
      review.open(data.belief_id).catch(showFailure);
    } else if (data.type === "belief.pending" && state.view === "review") review.refresh().catch(() => null);
    else if (data.type === "decided") review.removeDecided([data.belief_id]);
    else if (data.type === "outbox") synced(data.sent?.length || 0);
  });
}

boot().catch(showFailure);
