// Credence service worker: app-shell cache, "I've learned" notifications with Keep and Forget,
// and replay of the offline outbox (on start, on Background Sync, when the page asks).
importScripts("/js/db.js");

const DB = self.CredenceDB;
const CACHE = "credence-shell-v1";
const MODULES = [
  "api",
  "audit",
  "card",
  "db",
  "decisions",
  "dom",
  "evidence",
  "gestures",
  "inbox",
  "keys",
  "memory",
  "modes",
  "pair",
  "pile",
  "push",
  "report",
  "review",
  "reviewer",
  "runs",
  "settings",
  "stack",
];
const ICONS = ["icon-192", "icon-512", "maskable-512", "apple-touch-icon"];
const SHELL = [
  "/",
  "/app.js",
  "/styles.css",
  "/manifest.webmanifest",
  ...MODULES.map((name) => `/js/${name}.js`),
  ...ICONS.map((name) => `/icons/${name}.png`),
];
const ACTIONS = { keep: "Keep", forget: "Forget" };

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name !== CACHE) await caches.delete(name);
      await self.clients.claim();
      await replay();
    })(),
  );
});

// --- app shell: stale-while-revalidate. The cached copy answers at once (no wait on a slow or
// dead server); the network's answer refreshes the cache for the next load.

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== location.origin) return;
  if (url.pathname.startsWith("/api/") || url.pathname === "/sw.js") return;
  event.respondWith(shell(event, event.request.mode === "navigate" ? "/" : url.pathname));
});

async function shell(event, key) {
  const cache = await caches.open(CACHE);
  const network = fetch(event.request).then(async (response) => {
    if (response.ok) await cache.put(key, response.clone());
    return response;
  });
  event.waitUntil(network.catch(() => null));
  const cached = await cache.match(key);
  if (cached) return cached;
  try {
    return await network;
  } catch {
    return new Response("Offline, and this file is not cached yet.", { status: 503 });
  }
}

// --- push

self.addEventListener("push", (event) => event.waitUntil(showPush(event.data)));

async function showPush(data) {
  let message = {};
  try {
    message = data ? data.json() : {};
  } catch {
    message = { body: data.text() };
  }
  const pending = message.type === "belief.pending" && message.belief_id;
  const max = self.Notification?.maxActions ?? 2;
  const body = message.body || "Something new to review in Credence";
  await self.registration.showNotification(message.title || "Credence", {
    body: message.changes ? `${body}\n${message.changes}` : body,
    icon: "/icons/icon-192.png",
    tag: pending ? `belief-${message.belief_id}` : message.type === "test" ? "credence-test" : "credence",
    actions: pending
      ? (message.actions || [])
          .filter((a) => ACTIONS[a])
          .slice(0, max)
          .map((a) => ({ action: a, title: ACTIONS[a] }))
      : [],
    data: {
      belief_id: message.belief_id,
      body: message.body,
      token: message.token,
      url: safeUrl(message.url),
      pending_count: message.pending_count,
      op: message.op,
      opens_only: message.opens_only === true,
    },
  });
  await setBadge(message.pending_count);
  await tell({ type: message.type, belief_id: message.belief_id });
}

/** Only same-origin paths may be opened from a notification. */
const safeUrl = (value) => (typeof value === "string" && /^\/(?!\/)/.test(value) ? value : "/");

async function setBadge(count) {
  if (!("setAppBadge" in navigator) || typeof count !== "number") return;
  await (count > 0 ? navigator.setAppBadge(count) : navigator.clearAppBadge()).catch(() => null);
}

self.addEventListener("notificationclick", (event) => {
  event.waitUntil(handleNotificationClick(event.notification, event.action));
});

/** Keep / Forget straight from the notification; a tap on the body opens the card. A belief
 * that changes another one (opens_only) is never decided from the lock screen: both buttons
 * open its card. (Also reachable as self.handleNotificationClick, for tests: script-made events
 * cannot waitUntil.) */
async function handleNotificationClick(notification, action) {
  const data = notification.data || {};
  notification.close();
  if (ACTIONS[action] && data.token && !data.opens_only) {
    const result = await pushAction(data, action);
    if (!result.ok) await openApp(data); // stale, expired or refused: decide on the card instead
    return result;
  }
  await openApp(data);
  return { ok: true, opened: true };
}
self.handleNotificationClick = handleNotificationClick;

async function pushAction(data, action) {
  const id = DB.randomKey();
  const auth = await DB.get("auth");
  const headers = { "Content-Type": "application/json", "Idempotency-Key": id };
  if (auth) headers.Authorization = `Bearer ${auth.key}`;
  const queue = async () => {
    await DB.enqueue({ id, kind: "push", belief_id: data.belief_id, content: data.body, action, token: data.token });
    await self.registration.sync?.register("credence-outbox").catch(() => null);
    await tell({ type: "outbox" });
    return { ok: true, queued: true };
  };
  let response;
  try {
    const body = JSON.stringify({ token: data.token, action });
    response = await fetch("/api/v1/push/actions", { method: "POST", headers, body });
  } catch {
    return queue(); // offline: the outbox replays it later, once
  }
  if (response.status === 429 || response.status >= 500) return queue();
  if (!response.ok) return { ok: false, status: response.status };
  if (typeof data.pending_count === "number") await setBadge(data.pending_count - 1);
  await tell({ type: "decided", belief_id: data.belief_id, action });
  return { ok: true, status: response.status };
}

async function openApp(data) {
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const existing = windows.find((client) => new URL(client.url).origin === location.origin);
  if (!existing) return self.clients.openWindow(data.url || "/");
  existing.postMessage({ type: "open-belief", belief_id: data.belief_id });
  await existing.focus().catch(() => null); // focus needs the user's tap; the card opens anyway
}

// --- outbox

async function tell(message) {
  for (const client of await self.clients.matchAll({ type: "window", includeUncontrolled: true }))
    client.postMessage(message);
}

async function replay() {
  const report = await DB.replay().catch(() => null);
  if (report && (report.sent.length || report.problems.length)) await tell({ type: "outbox", ...report });
}

self.addEventListener("sync", (event) => event.tag === "credence-outbox" && event.waitUntil(replay()));
self.addEventListener("message", (event) => event.data?.type === "replay" && event.waitUntil(replay()));

// Each start of the worker is a chance to deliver what waited while it slept.
replay();
