// The evidence behind a card: related beliefs and source episodes, fetched once and cached.
import { api, ApiError } from "./api.js";
import { ago, h, replace } from "./dom.js";

const beliefs = new Map();
const episodePages = new Map();
const EPISODE_PAGE = 200;
const EPISODE_PAGES_MAX = 10;

/** The belief with this id (cached; resolves to null when it is gone or not visible). */
export function belief(id) {
  if (!beliefs.has(id)) {
    const loading = api(`/beliefs/${encodeURIComponent(id)}`)
      .then(({ body }) => body)
      .catch((error) => {
        beliefs.delete(id);
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      });
    beliefs.set(id, loading);
  }
  return beliefs.get(id);
}

export function forgetCachedBelief(id) {
  beliefs.delete(id);
}

/** The agent's episodes with these ids, reading the episode list page by page until found. */
export async function episodes(agentId, ids) {
  const wanted = new Set(ids);
  let state = episodePages.get(agentId);
  if (!state) {
    state = { byId: new Map(), cursor: undefined, pages: 0, done: false };
    episodePages.set(agentId, state);
  }
  while (!state.done && [...wanted].some((id) => !state.byId.has(id))) {
    if (state.pages >= EPISODE_PAGES_MAX) break;
    const cursor = state.cursor ? `&cursor=${encodeURIComponent(state.cursor)}` : "";
    const { body } = await api(
      `/agents/${encodeURIComponent(agentId)}/episodes?limit=${EPISODE_PAGE}${cursor}`,
    );
    for (const episode of body.items) state.byId.set(episode.id, episode);
    state.pages += 1;
    state.cursor = body.next_cursor;
    state.done = !body.next_cursor;
  }
  return ids.map((id) => state.byId.get(id) || { id, missing: true });
}

const TRIGGERS = { steer: "Steered", denial: "Said no", followup: "Followed up" };

export function episodeView(episode) {
  if (episode.missing) {
    return h("li", { class: "episode missing" }, `Episode ${episode.id} is not available.`);
  }
  return h(
    "li",
    { class: `episode origin-${episode.origin}` },
    h(
      "p",
      { class: "episode-meta" },
      h("time", { datetime: episode.finished_at, title: episode.finished_at }, ago(episode.finished_at)),
      episode.role_label ? ` · ${episode.role_label}` : "",
      episode.origin === "untrusted"
        ? h("span", { class: "chip chip-warn" }, "third-party content")
        : null,
    ),
    h("p", { class: "episode-summary" }, episode.summary),
    episode.interventions.length
      ? h(
          "ul",
          { class: "interventions" },
          episode.interventions.map((item) =>
            h(
              "li",
              {},
              h("span", { class: `chip chip-${item.trigger}` }, TRIGGERS[item.trigger] || item.trigger),
              h("q", {}, item.text),
            ),
          ),
        )
      : null,
    episode.untrusted_reasons && episode.untrusted_reasons.length
      ? h("p", { class: "episode-untrusted" }, `Reached by: ${episode.untrusted_reasons.join(", ")}`)
      : null,
  );
}

/** A <details> that loads the source episodes the first time it opens. */
export function evidenceDetails(item) {
  const count = item.source_episodes.length;
  const list = h("ol", { class: "episodes" });
  const details = h(
    "details",
    { class: "evidence" },
    h("summary", {}, count === 1 ? "Evidence · 1 episode" : `Evidence · ${count} episodes`),
    list,
  );
  let loaded = false;
  details.addEventListener("toggle", async () => {
    if (!details.open || loaded) return;
    loaded = true;
    replace(list, h("li", { class: "loading" }, "Loading episodes…"));
    try {
      const found = await episodes(item.agent_id, item.source_episodes);
      replace(list, found.map(episodeView));
    } catch (error) {
      loaded = false;
      replace(list, h("li", { class: "episode missing" }, `Could not load episodes: ${error.message}`));
    }
  });
  return details;
}
