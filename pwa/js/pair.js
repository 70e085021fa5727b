// Pairing: a one-time code from `credence pair` becomes this device's reviewer key (IndexedDB).
import { api, OfflineError, saveAuth } from "./api.js";

/** The code inside a pasted pairing link, or the text itself when it is a bare code. */
export function codeFrom(text) {
  try {
    return new URL(text.trim()).searchParams.get("pair") || "";
  } catch {
    return text.trim();
  }
}

/** Exchange a pairing code for a reviewer key; throws an Error that says what went wrong. */
export async function pair(code) {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(code)) {
    throw new Error("That is not a pairing code. Run `credence pair` and open the link it prints.");
  }
  let body;
  try {
    ({ body } = await api("/pair", { method: "POST", body: { code }, anonymous: true }));
  } catch (error) {
    if (error instanceof OfflineError)
      throw new Error("Cannot reach the Credence server. Check the connection and try again.");
    if (error.status === 410) throw new Error(`${error.detail.charAt(0).toUpperCase()}${error.detail.slice(1)}.`);
    if (error.status === 429) throw new Error("Too many pairing attempts. Wait a minute and try again.");
    throw error;
  }
  await saveAuth({ key: body.key, info: body.info, paired_at: new Date().toISOString() });
}

export function createPairView({ onPaired }) {
  const form = document.getElementById("pair-form");
  const error = document.getElementById("pair-error");
  const showError = (message) => {
    error.textContent = message || "";
    error.hidden = !message;
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const submit = form.querySelector("button");
    submit.disabled = true;
    try {
      await pair(codeFrom(form.elements.code.value));
      form.reset();
      showError(null);
      onPaired();
    } catch (failure) {
      showError(failure.message);
    } finally {
      submit.disabled = false;
    }
  });
  return { showError };
}
