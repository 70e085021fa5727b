// A belief's audit trail in words: what happened, by which device or key, when.
import { api } from "./api.js";
import { ago, h, replace, when } from "./dom.js";

export const AUDIT_WORDS = {
  proposed: "Proposed",
  kept: "Kept",
  forgotten: "Forgotten",
  edited: "Edited",
  reopened: "Reopened for review",
  superseded: "Replaced",
  restored: "Restored",
};

/** A <details> with a belief's audit trail, loaded when opened. */
export function auditDetails(beliefId, { open = false, label = "Audit trail" } = {}) {
  const list = h("ol.audit");
  const details = h("details", h("summary", label), list);
  let loaded = false;
  const load = async () => {
    if (loaded) return;
    loaded = true;
    try {
      const { body } = await api(`/beliefs/${beliefId}/audit`);
      const rows = body.items.map((row) =>
        h(
          `li.audit-${row.action}`,
          h("span.audit-action", AUDIT_WORDS[row.action] || row.action),
          h(
            "span.muted",
            ` by ${row.actor_label || row.actor} · `,
            h("time", { datetime: row.at, title: when(row.at) }, ago(row.at)),
          ),
          h(
            "span.muted",
            ` · ${row.before_status || "new"} → ${row.after_status}, v${row.version}${row.detail && row.detail !== "add" ? ` · ${row.detail}` : ""}`,
          ),
        ),
      );
      replace(list, rows);
    } catch (error) {
      loaded = false;
      replace(list, h("li.hint", `Could not load: ${error.message}`));
    }
  };
  details.addEventListener("toggle", () => details.open && load());
  if (open) {
    details.open = true;
    load();
  }
  return details;
}
