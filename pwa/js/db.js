// Credence's IndexedDB: the paired key and the outbox of decisions waiting to sync.
// One file for both worlds: the page imports it as a module, the service worker loads it with
// importScripts(), so it uses no import/export and publishes itself as self.CredenceDB.
(() => {
  const DB_NAME = "credence";
  const DB_VERSION = 1;
  const PROBLEMS_KEY = "sync-problems";
  // Answers that will never change on a retry: the item leaves the outbox and is reported.
  const FINAL = new Set([400, 401, 403, 404, 409, 410, 412, 422, 428]);
  let opening = null;

  function open() {
    if (!opening) {
      opening = new Promise((resolve, reject) => {
        const request = indexedDB.open(DB_NAME, DB_VERSION);
        request.onupgradeneeded = () => {
          const db = request.result;
          if (!db.objectStoreNames.contains("kv")) db.createObjectStore("kv");
          if (!db.objectStoreNames.contains("outbox")) {
            db.createObjectStore("outbox", { keyPath: "id" }).createIndex("queued_at", "queued_at");
          }
        };
        request.onsuccess = () => {
          const db = request.result;
          db.onversionchange = () => {
            db.close();
            opening = null;
          };
          resolve(db);
        };
        request.onerror = () => {
          opening = null;
          reject(request.error);
        };
      });
    }
    return opening;
  }

  async function run(storeName, mode, work) {
    const db = await open();
    return new Promise((resolve, reject) => {
      const tx = db.transaction(storeName, mode);
      const store = tx.objectStore(storeName);
      let result;
      const request = work(store);
      if (request) request.onsuccess = () => (result = request.result);
      tx.oncomplete = () => resolve(result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error || new Error("IndexedDB transaction aborted"));
    });
  }

  const get = (key) => run("kv", "readonly", (s) => s.get(key));
  const set = (key, value) => run("kv", "readwrite", (s) => s.put(value, key));
  const del = (key) => run("kv", "readwrite", (s) => s.delete(key));

  async function outbox() {
    const items = (await run("outbox", "readonly", (s) => s.getAll())) || [];
    return items.sort((a, b) => (a.queued_at < b.queued_at ? -1 : 1));
  }

  const enqueue = (item) =>
    run("outbox", "readwrite", (s) => s.put({ attempts: 0, queued_at: Date.now(), ...item }));
  const dequeue = (id) => run("outbox", "readwrite", (s) => s.delete(id));

  async function addProblem(problem) {
    const problems = (await get(PROBLEMS_KEY)) || [];
    problems.push(problem);
    await set(PROBLEMS_KEY, problems.slice(-20));
  }

  async function takeProblems() {
    const problems = (await get(PROBLEMS_KEY)) || [];
    if (problems.length) await del(PROBLEMS_KEY);
    return problems;
  }

  /** A random token usable as an Idempotency-Key, also outside secure contexts. */
  function randomKey() {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function requestFor(item, auth) {
    const headers = { "Idempotency-Key": item.id };
    if (auth) headers.Authorization = `Bearer ${auth.key}`;
    if (item.kind === "push") {
      headers["Content-Type"] = "application/json";
      const body = JSON.stringify({ token: item.token, action: item.action });
      return { url: "/api/v1/push/actions", init: { method: "POST", headers, body } };
    }
    headers["If-Match"] = `"${item.version}"`;
    const init = { method: "POST", headers };
    if (item.body) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(item.body);
    }
    return { url: `/api/v1/beliefs/${encodeURIComponent(item.belief_id)}/${item.action}`, init };
  }

  async function replayOnce() {
    const auth = await get("auth");
    const report = { sent: [], problems: [], waiting: 0, offline: false };
    for (const item of await outbox()) {
      if (item.kind !== "push" && !auth) break;
      const { url, init } = requestFor(item, auth);
      let response;
      try {
        response = await fetch(url, init);
      } catch {
        report.offline = true;
        break; // still offline: keep this and everything after it, in order
      }
      if (response.ok) {
        await dequeue(item.id);
        report.sent.push({ ...item, belief: await response.json().catch(() => null) });
      } else if (FINAL.has(response.status)) {
        const problem = await response.json().catch(() => ({}));
        await dequeue(item.id);
        const entry = { ...item, status: response.status, detail: problem.detail || response.statusText };
        await addProblem(entry);
        report.problems.push(entry);
      } else {
        await run("outbox", "readwrite", (s) => s.put({ ...item, attempts: item.attempts + 1 }));
        break; // 429 / 5xx: try again on the next occasion
      }
    }
    report.waiting = (await outbox()).length;
    return report;
  }

  /** Send every queued decision once, in order; page and worker never replay at the same time. */
  function replay() {
    if (self.navigator && navigator.locks) {
      return navigator.locks.request("credence-outbox", () => replayOnce());
    }
    return replayOnce();
  }

  self.CredenceDB = {
    open, get, set, del, outbox, enqueue, dequeue, replay, takeProblems, addProblem, randomKey,
  };
})();
