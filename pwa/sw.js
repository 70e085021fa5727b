// Credence service worker: app-shell cache, "I've learned" notifications with Keep and Forget,
// and replay of the offline outbox (on start, on Background Sync, when the page asks).
importScripts("/js/db.js");

const DB = self.CredenceDB;
const CACHE = "credence-shell-v1";
const SHELL = [
  "/",
  "/index.html",
  "/app.js",
  "/styles.css",
  "/manifest.webmanifest",
  "/js/api.js",
  "/js/db.js",
  "/js/dom.js",
  "/js/evidence.js",
  "/js/memory.js",
  "/js/push.js",
  "/js/review.js",
  "/js/runs.js",
  "/js/settings.js",
  "/icons/icon-192.png",
  "/icons/icon-512.png",
  "/icons/maskable-512.png",
  "/icons/apple-touch-icon.png",
];
const NETWORK_TIMEOUT_MS = 3000;
const ACTION_TITLES = { keep: "Keep", forget: "Forget" };

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
      await replayAndTell();
    })(),
  );
});

// --- app shell: network first (fresh code when online), the cache when offline or slow --------

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (url.pathname.startsWith("/api/") || url.pathname === "/sw.js") return;
  event.respondWith(shell(request, url, event));
});

async function shell(request, url, event) {
  const cache = await caches.open(CACHE);
  const key = request.mode === "navigate" ? "/" : url.pathname;
  const network = fetch(request).then((response) => {
    if (response.ok && response.type === "basic") cache.put(key, response.clone());
    return response;
  });
  event.waitUntil(network.then(() => undefined, () => undefined));
  let timer;
  const slow = new Promise((resolve) => (timer = setTimeout(resolve, NETWORK_TIMEOUT_MS)));
  try {
    const first = await Promise.race([network, slow]);
    if (first) return first;
    return (await cache.match(key)) || (await network);
  } catch {
    const cached = await cache.match(key);
    if (cached) return cached;
    return new Response("Offline, and this file is not cached yet.", {
      status: 503,
      headers: { "Content-Type": "text/plain; charset=utf-8" },
    });
  } finally {
    clearTimeout(timer);
  }
}

// --- push ------------------------------------------------------------------------------------

self.addEventListener("push", (event) => {
  event.waitUntil(showPush(event.data));
});

function parsePush(data) {
  if (!data) return {};
  try {
    return data.json();
  } catch {
    return { title: "Credence", body: data.text() };
  }
}

async function showPush(data) {
  const message = parsePush(data);
  const options = {
    body: message.body || "Something new to review in Credence",
    icon: "/icons/icon-192.png",
    timestamp: Date.now(),
    data: {
      type: message.type || "unknown",
      belief_id: message.belief_id || null,
      agent_id: message.agent_id || null,
      token: message.token || null,
      url: safeUrl(message.url),
      pending_count: message.pending_count,
    },
  };
  if (message.type === "belief.pending" && message.belief_id) {
    options.tag = `belief-${message.belief_id}`;
    const max = self.Notification?.maxActions ?? 2;
    options.actions = (message.actions || [])
      .filter((action) => ACTION_TITLES[action])
      .slice(0, max)
      .map((action) => ({ action, title: ACTION_TITLES[action] }));
  } else {
    options.tag = message.type === "test" ? "credence-test" : "credence";
  }
  await self.registration.showNotification(message.title || "Credence", options);
  await setBadge(message.pending_count);
  await tell({ type: message.type || "push", belief_id: message.belief_id || null });
}

/** Only same-origin paths may be opened from a notification. */
function safeUrl(value) {
  if (typeof value !== "string" || !value.startsWith("/") || value.startsWith("//")) return "/";
  return value;
}

async function setBadge(count) {
  if (!("setAppBadge" in self.navigator) || typeof count !== "number") return;
  try {
    await (count > 0 ? navigator.setAppBadge(count) : navigator.clearAppBadge());
  } catch {
    // Badging is a nicety; a platform without it changes nothing.
  }
}

self.addEventListener("notificationclick", (event) => {
  event.waitUntil(handleNotificationClick(event.notification, event.action));
});

/** Keep / Forget straight from the notification; a tap on the body opens the card. */
async function handleNotificationClick(notification, action) {
  const data = notification.data || {};
  notification.close();
  if (ACTION_TITLES[action] && data.token) {
    const result = await pushAction(data, action);
    if (result.ok) return result;
    await openApp(data.url, data.belief_id);
    return result;
  }
  await openApp(data.url, data.belief_id);
  return { ok: true, opened: true };
}
self.handleNotificationClick = handleNotificationClick;

async function pushAction(data, action) {
  const id = DB.randomKey();
  const auth = await DB.get("auth");
  const headers = { "Content-Type": "application/json", "Idempotency-Key": id };
  if (auth) headers.Authorization = `Bearer ${auth.key}`;
  const queue = async () => {
    await DB.enqueue({ id, kind: "push", belief_id: data.belief_id, agent_id: data.agent_id, action, token: data.token });
    try {
      await self.registration.sync?.register("credence-outbox");
    } catch {
      // No Background Sync here: the next start of the app or worker replays it.
    }
    await tell({ type: "outbox" });
    return { ok: true, queued: true };
  };
  let response;
  try {
    response = await fetch("/api/v1/push/actions", {
      method: "POST",
      headers,
      body: JSON.stringify({ token: data.token, action }),
    });
  } catch {
    return queue();
  }
  if (response.ok) {
    if (typeof data.pending_count === "number") await setBadge(data.pending_count - 1);
    await tell({ type: "decided", belief_id: data.belief_id, action });
    return { ok: true, status: response.status };
  }
  if (response.status === 429 || response.status >= 500) return queue();
  return { ok: false, status: response.status };
}

async function openApp(url, beliefId) {
  const target = safeUrl(url);
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const existing = windows.find((client) => new URL(client.url).origin === self.location.origin);
  if (existing) {
    existing.postMessage({ type: "open-belief", belief_id: beliefId });
    try {
      await existing.focus();
    } catch {
      // Focus needs the user's tap; without it the card still opens in that window.
    }
    return existing;
  }
  return self.clients.openWindow(target);
}

// --- outbox ----------------------------------------------------------------------------------

async function tell(message) {
  for (const client of await self.clients.matchAll({ type: "window", includeUncontrolled: true })) {
    client.postMessage(message);
  }
}

async function replayAndTell() {
  try {
    const report = await DB.replay();
    if (report.sent.length || report.problems.length) await tell({ type: "outbox", ...report });
    return report;
  } catch {
    return null;
  }
}

self.addEventListener("sync", (event) => {
  if (event.tag === "credence-outbox") event.waitUntil(replayAndTell());
});

self.addEventListener("message", (event) => {
  if (event.data && event.data.type === "replay") event.waitUntil(replayAndTell());
});

// Each start of the worker is a chance to deliver what waited while it slept.
replayAndTell();
