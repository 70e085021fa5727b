// The page's API client: bearer key, JSON in and out, errors with the server's own words.
import "./db.js";

export const db = self.CredenceDB;
const BASE = "/api/v1";
let auth = null;

export class ApiError extends Error {
  constructor(status, detail, body, headers) {
    super(detail || `HTTP ${status}`);
    this.status = status;
    this.detail = detail || `HTTP ${status}`;
    this.body = body;
    this.headers = headers;
  }
}

/** The request never reached the server: ``offline`` (no network) or the server is unreachable. */
export class OfflineError extends Error {
  constructor() {
    const offline = !navigator.onLine;
    super(offline ? "You are offline." : "Cannot reach the Credence server.");
    this.offline = offline;
  }
}

let onUnauthorized = () => null;
/** What to do when the server no longer accepts this device's key (re-pair). */
export const whenUnauthorized = (handler) => (onUnauthorized = handler);

export async function loadAuth() {
  auth = (await db.get("auth")) || null;
  return auth;
}

export const currentAuth = () => auth;

export async function saveAuth(value) {
  auth = value;
  await db.set("auth", value);
}

export async function clearAuth() {
  auth = null;
  await db.del("auth");
}

/** Call the API; resolves to {body, headers, status} or throws ApiError / OfflineError. */
export async function api(path, { method = "GET", body, headers = {}, anonymous = false } = {}) {
  const init = { method, headers: { Accept: "application/json", ...headers } };
  if (!anonymous && auth) init.headers.Authorization = `Bearer ${auth.key}`;
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(BASE + path, init);
  } catch {
    throw new OfflineError();
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { detail: text };
    }
  }
  if (response.status === 401 && init.headers.Authorization) onUnauthorized();
  if (!response.ok) {
    throw new ApiError(response.status, data?.detail, data, response.headers);
  }
  return { body: data, headers: response.headers, status: response.status };
}

/** Every item of a cursor-paged list, up to ``max`` items. */
export async function pages(path, max = 1000) {
  const items = [];
  let cursor = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const url = cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path;
    const { body } = await api(url);
    items.push(...body.items);
    cursor = body.next_cursor;
  } while (cursor && items.length < max);
  return items;
}

export const decisionPath = (id, action) => `/beliefs/${encodeURIComponent(id)}/${action}`;
