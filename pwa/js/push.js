// Web Push in the page: permission only after a tap, subscription re-sent on every open.
import { api, db } from "./api.js";

const SUB_KEY = "push-subscription-id";
// A browser whose push service is unreachable never settles subscribe(); say so instead.
const SUBSCRIBE_TIMEOUT_MS = 10000;

export const isIOS = () =>
  /iphone|ipad|ipod/i.test(navigator.userAgent) || (navigator.platform === "MacIntel" && navigator.maxTouchPoints > 1);
export const isStandalone = () => matchMedia("(display-mode: standalone)").matches || navigator.standalone === true;
const supported = () => "serviceWorker" in navigator && "PushManager" in self && "Notification" in self;

const registration = () => navigator.serviceWorker.getRegistration();
const subscription = async () => (await registration())?.pushManager.getSubscription();

async function serverKey() {
  const { body } = await api("/push/vapid-public-key");
  const text = body.public_key.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(text + "=".repeat((4 - (text.length % 4)) % 4)), (c) => c.charCodeAt(0));
}

const sameKey = (a, b) => a && new Uint8Array(a).join() === b.join();

async function register(sub) {
  const { body } = await api("/push/subscriptions", { method: "POST", body: sub.toJSON() });
  await db.set(SUB_KEY, body.id);
}

/** Support, permission, and whether this device is subscribed. */
export async function status() {
  if (!supported()) return { supported: false };
  return { supported: true, permission: Notification.permission, subscribed: Boolean(await subscription()) };
}

/** Ask for permission (call only from a tap) and subscribe this device; false if refused. */
export async function enable() {
  if ((await Notification.requestPermission()) !== "granted") return false;
  const ready = await navigator.serviceWorker.ready;
  const key = await serverKey();
  let sub = await ready.pushManager.getSubscription();
  if (sub && !sameKey(sub.options.applicationServerKey, key)) {
    await sub.unsubscribe();
    sub = null;
  }
  if (!sub) {
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error("the browser's push service did not answer; check the connection and try again")),
        SUBSCRIBE_TIMEOUT_MS,
      );
    });
    const subscribing = ready.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
    sub = await Promise.race([subscribing, late]).finally(() => clearTimeout(timer));
  }
  await register(sub);
  return true;
}

/** Re-send this device's subscription (refreshes last_seen_at; re-subscribes on a new key). */
export async function resend() {
  const sub = supported() && Notification.permission === "granted" && (await subscription());
  if (!sub) return;
  if (sameKey(sub.options.applicationServerKey, await serverKey())) await register(sub);
  else await enable();
}

export async function disable() {
  const id = await db.get(SUB_KEY);
  if (id) {
    await api(`/push/subscriptions/${id}`, { method: "DELETE" }).catch(() => null);
    await db.del(SUB_KEY);
  }
  const sub = supported() && (await subscription());
  if (sub) await sub.unsubscribe();
}

export const sendTest = () => api("/push/test", { method: "POST", body: {} });
