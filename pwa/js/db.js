// Credence's IndexedDB: the paired key and the outbox of decisions waiting to sync.
// One file for both worlds: the page imports it as a module, the service worker loads it with
// importScripts(), so it uses no import/export and publishes itself as self.CredenceDB.
(() => {
  const PROBLEMS = "sync-problems";
  // Answers that will never change on a retry: the item leaves the outbox and is reported.
  // A 401 is not one of them: the decisions wait for the device to be paired again.
  const FINAL = new Set([400, 403, 404, 409, 410, 412, 422, 428]);
  let opening = null;

  function open() {
    opening ||= new Promise((resolve, reject) => {
      const request = indexedDB.open("credence", 1);
      request.onupgradeneeded = () => {
        request.result.createObjectStore("kv");
        request.result.createObjectStore("outbox", { keyPath: "id" });
      };
      request.onsuccess = () => {
        request.result.onversionchange = () => {
          request.result.close();
          opening = null;
        };
        resolve(request.result);
      };
      request.onerror = () => {
        opening = null;
        reject(request.error);
      };
    });
    return opening;
  }

  async function run(store, mode, work) {
    const tx = (await open()).transaction(store, mode);
    const request = work(tx.objectStore(store));
    return new Promise((resolve, reject) => {
      tx.oncomplete = () => resolve(request.result);
      tx.onerror = tx.onabort = () => reject(tx.error || new Error("IndexedDB transaction aborted"));
    });
  }

  const get = (key) => run("kv", "readonly", (s) => s.get(key));
  const set = (key, value) => run("kv", "readwrite", (s) => s.put(value, key));
  const del = (key) => run("kv", "readwrite", (s) => s.delete(key));
  const put = (item) => run("outbox", "readwrite", (s) => s.put(item));
  const dequeue = (id) => run("outbox", "readwrite", (s) => s.delete(id));
  const enqueue = (item) => put({ attempts: 0, queued_at: Date.now(), ...item });
  const outbox = async () =>
    ((await run("outbox", "readonly", (s) => s.getAll())) || []).sort((a, b) => a.queued_at - b.queued_at);

  async function takeProblems() {
    const problems = (await get(PROBLEMS)) || [];
    if (problems.length) await del(PROBLEMS);
    return problems;
  }

  /** A random token usable as an Idempotency-Key, also outside secure contexts. */
  const randomKey = () =>
    Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");

  function request(item, auth) {
    const headers = { "Idempotency-Key": item.id, "Content-Type": "application/json" };
    if (auth) headers.Authorization = `Bearer ${auth.key}`;
    if (item.kind === "push") {
      return [
        "/api/v1/push/actions",
        { method: "POST", headers, body: JSON.stringify({ token: item.token, action: item.action }) },
      ];
    }
    headers["If-Match"] = `"${item.version}"`;
    const body = item.body ? JSON.stringify(item.body) : undefined;
    return [`/api/v1/beliefs/${item.belief_id}/${item.action}`, { method: "POST", headers, body }];
  }

  async function replayOnce() {
    const auth = await get("auth");
    const report = { sent: [], problems: [] };
    for (const item of await outbox()) {
      if (item.kind !== "push" && !auth) break;
      let response;
      try {
        response = await fetch(...request(item, auth));
      } catch {
        break; // still offline: keep this and everything after it, in order
      }
      if (response.status === 401) {
        report.unauthorized = true;
        break;
      }
      if (response.ok) {
        await dequeue(item.id);
        report.sent.push(item);
      } else if (FINAL.has(response.status)) {
        const problem = await response.json().catch(() => ({}));
        const entry = { ...item, status: response.status, detail: problem.detail || response.statusText };
        await dequeue(item.id);
        await set(PROBLEMS, [...((await get(PROBLEMS)) || []), entry].slice(-20));
        report.problems.push(entry);
      } else {
        await put({ ...item, attempts: item.attempts + 1 });
        break; // 429 / 5xx: try again on the next occasion
      }
    }
    return report;
  }

  /** Send every queued decision once, in order; page and worker never replay at the same time
   * (a Web Lock), and each carries its Idempotency-Key so a lost answer cannot apply it twice. */
  const replay = () => (navigator.locks ? navigator.locks.request("credence-outbox", replayOnce) : replayOnce());

  self.CredenceDB = { get, set, del, outbox, enqueue, dequeue, replay, takeProblems, randomKey };
})();
