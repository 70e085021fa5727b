// Web Push in the page: permission only after a tap, subscription re-sent on every open.
import { api, db } from "./api.js";

const SUB_KEY = "push-subscription-id";
// A browser whose push service is unreachable never settles subscribe(); say so instead.
const SUBSCRIBE_TIMEOUT_MS = 10000;

export const isIOS = () =>
  /iphone|ipad|ipod/i.test(navigator.userAgent) ||
  (navigator.platform === "MacIntel" && navigator.maxTouchPoints > 1);

export const isStandalone = () =>
  matchMedia("(display-mode: standalone)").matches || navigator.standalone === true;

export function supported() {
  return "serviceWorker" in navigator && "PushManager" in self && "Notification" in self;
}

function withTimeout(promise, ms, message) {
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function urlBase64ToBytes(text) {
  const padded = (text + "=".repeat((4 - (text.length % 4)) % 4)).replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

function sameKey(a, b) {
  if (!a || !b) return false;
  const x = new Uint8Array(a);
  return x.length === b.length && x.every((v, i) => v === b[i]);
}

async function serverKey() {
  const { body } = await api("/push/vapid-public-key");
  const key = typeof body === "string" ? body : body.public_key || body.key || body.vapid_public_key;
  return urlBase64ToBytes(key);
}

async function register(subscription) {
  const { body } = await api("/push/subscriptions", { method: "POST", body: subscription.toJSON() });
  if (body && body.id) await db.set(SUB_KEY, body.id);
  return body;
}

/** What the settings view shows: support, permission, and whether this device is subscribed. */
export async function status() {
  if (!supported()) return { supported: false, permission: "unsupported", subscribed: false };
  const registration = await navigator.serviceWorker.getRegistration();
  const subscription = registration ? await registration.pushManager.getSubscription() : null;
  return { supported: true, permission: Notification.permission, subscribed: Boolean(subscription) };
}

/** Ask for permission (call only from a tap) and subscribe this device. */
export async function enable() {
  const permission = await Notification.requestPermission();
  if (permission !== "granted") return { ok: false, permission };
  const registration = await navigator.serviceWorker.ready;
  const key = await serverKey();
  let subscription = await registration.pushManager.getSubscription();
  if (subscription && !sameKey(subscription.options.applicationServerKey, key)) {
    await subscription.unsubscribe();
    subscription = null;
  }
  subscription ||= await withTimeout(
    registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }),
    SUBSCRIBE_TIMEOUT_MS,
    "the browser's push service did not answer; check the connection and try again",
  );
  await register(subscription);
  return { ok: true, permission };
}

/** Re-send an existing subscription (refreshes last_seen_at; re-subscribes if the key changed). */
export async function resend() {
  if (!supported() || Notification.permission !== "granted") return false;
  const registration = await navigator.serviceWorker.getRegistration();
  const subscription = registration && (await registration.pushManager.getSubscription());
  if (!subscription) return false;
  const key = await serverKey();
  if (!sameKey(subscription.options.applicationServerKey, key)) {
    await enable();
    return true;
  }
  await register(subscription);
  return true;
}

export async function disable() {
  const id = await db.get(SUB_KEY);
  if (id) {
    await api(`/push/subscriptions/${encodeURIComponent(id)}`, { method: "DELETE" }).catch(() => null);
    await db.del(SUB_KEY);
  }
  const registration = supported() ? await navigator.serviceWorker.getRegistration() : null;
  const subscription = registration && (await registration.pushManager.getSubscription());
  if (subscription) await subscription.unsubscribe();
}

export async function sendTest() {
  const { body } = await api("/push/test", { method: "POST", body: {} });
  return body;
}

/** App badge = pending count, where the Badging API exists. */
export function setBadge(count) {
  if (!("setAppBadge" in navigator)) return;
  (count ? navigator.setAppBadge(count) : navigator.clearAppBadge()).catch(() => null);
}
