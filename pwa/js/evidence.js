// The evidence behind a card: related beliefs and source episodes, fetched once and cached.
import { api } from "./api.js";
import { ago, h, replace } from "./dom.js";

const beliefs = new Map();
const episodeCache = new Map();
const TRIGGERS = { steer: "Steered", denial: "Said no", followup: "Followed up" };

/** The belief with this id (cached; resolves to null when it is gone or not visible). */
export function belief(id) {
  if (!beliefs.has(id)) {
    const loading = api(`/beliefs/${encodeURIComponent(id)}`).then(
      ({ body }) => body,
      (error) => {
        beliefs.delete(id);
        if (error.status === 404) return null;
        throw error;
      },
    );
    beliefs.set(id, loading);
  }
  return beliefs.get(id);
}

export const forgetCachedBelief = (id) => beliefs.delete(id);

/** The agent's episodes with these ids, each fetched once (a missing one shows as missing). */
function episodes(agentId, ids) {
  return Promise.all(
    ids.map((id) => {
      const key = `${agentId}/${id}`;
      if (!episodeCache.has(key)) {
        const loading = api(`/agents/${encodeURIComponent(agentId)}/episodes/${encodeURIComponent(id)}`).then(
          ({ body }) => body,
          (error) => {
            episodeCache.delete(key);
            if (error.status === 404) return { id, missing: true };
            throw error;
          },
        );
        episodeCache.set(key, loading);
      }
      return episodeCache.get(key);
    }),
  );
}

function episodeView(episode) {
  if (episode.missing) return h("li.episode", `Episode ${episode.id} is not available.`);
  const untrusted = episode.origin === "untrusted";
  return h(
    "li.episode",
    h(
      "p.episode-meta",
      h("time", { datetime: episode.finished_at }, ago(episode.finished_at)),
      episode.role_label && ` · ${episode.role_label}`,
      untrusted && h("span.chip.chip-warn", "third-party content"),
    ),
    h("p", episode.summary),
    episode.interventions.length > 0 &&
      h(
        "ul.interventions",
        episode.interventions.map((item) =>
          h("li", h("span.chip", TRIGGERS[item.trigger] || item.trigger), h("q", item.text)),
        ),
      ),
    untrusted &&
      episode.untrusted_reasons?.length > 0 &&
      h("p.hint", `Reached by: ${episode.untrusted_reasons.join(", ")}`),
  );
}

/** A <details> that loads the source episodes the first time it opens. */
export function evidenceDetails(item) {
  const count = item.source_episodes.length;
  const list = h("ol.episodes");
  const details = h("details.evidence", h("summary", `Evidence · ${count} episode${count === 1 ? "" : "s"}`), list);
  let loaded = false;
  details.addEventListener("toggle", async () => {
    if (!details.open || loaded) return;
    loaded = true;
    replace(list, h("li.hint", "Loading episodes…"));
    try {
      replace(list, (await episodes(item.agent_id, item.source_episodes)).map(episodeView));
    } catch (error) {
      loaded = false;
      replace(list, h("li.hint", `Could not load episodes: ${error.message}`));
    }
  });
  return details;
}
