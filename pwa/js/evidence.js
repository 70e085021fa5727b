// The evidence behind a card: related beliefs and source episodes, fetched once and cached.
import { api } from "./api.js";
import { ago, h, replace } from "./dom.js";

const beliefs = new Map();
const episodeCache = new Map();
const EPISODE_PAGES_MAX = 10;
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

/** The agent's episodes with these ids: the list API has no lookup by id, so read it page by
 * page (200 at a time, at most 10 pages) until they are all found. */
async function episodes(agentId, ids) {
  let state = episodeCache.get(agentId);
  if (!state) episodeCache.set(agentId, (state = { byId: new Map(), cursor: "", pages: 0, done: false }));
  while (!state.done && state.pages < EPISODE_PAGES_MAX && ids.some((id) => !state.byId.has(id))) {
    const cursor = state.cursor ? `&cursor=${state.cursor}` : "";
    const { body } = await api(`/agents/${agentId}/episodes?limit=200${cursor}`);
    for (const episode of body.items) state.byId.set(episode.id, episode);
    state.pages += 1;
    state.cursor = body.next_cursor;
    state.done = !body.next_cursor;
  }
  return ids.map((id) => state.byId.get(id) || { id, missing: true });
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
        episode.interventions.map((item) => h("li", h("span.chip", TRIGGERS[item.trigger] || item.trigger), h("q", item.text))),
      ),
    untrusted && episode.untrusted_reasons?.length > 0 && h("p.hint", `Reached by: ${episode.untrusted_reasons.join(", ")}`),
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
