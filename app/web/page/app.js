// The face library page: plain DOM, no framework. Every text from the server (names, cameras,
// errors) goes in with textContent or as an attribute value, never as HTML: names are hostile input.
"use strict";

const el = (tag, props = {}, children = []) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "text") e.textContent = v;
    else if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
};

const say = (text, ok) => {
  const s = document.getElementById("status");
  s.textContent = text;
  s.className = ok ? "ok" : "error";
};

// JSON from the API; throws an Error carrying the server's message.
async function api(path, options = {}) {
  const r = await fetch(path, options);
  const type = r.headers.get("Content-Type") || "";
  const body = type.startsWith("application/json") ? await r.json() : null;
  if (!r.ok) throw new Error((body && body.error) || `${r.status} ${r.statusText}`);
  return body;
}

const post = (path, fields) =>
  api(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(fields) });

const time = (ms) => (ms ? new Date(ms).toLocaleString() : "—");

// A button that asks for a second click before acting (no modal dialogs).
function confirmButton(label, action, armedLabel = "Really " + label.toLowerCase() + "?") {
  const b = el("button", { class: "danger", type: "button", text: label });
  let armed = false;
  b.addEventListener("click", async () => {
    if (!armed) {
      armed = true;
      b.textContent = armedLabel;
      setTimeout(() => { armed = false; b.textContent = label; }, 4000);
      return;
    }
    await action();
  });
  return b;
}

let people = [];

async function loadPeople() {
  people = await api("/api/people");
  const list = document.getElementById("people-list");
  list.replaceChildren();
  if (!people.length) list.append(el("p", { class: "hint", text: "Nobody enrolled yet: add photos above." }));
  for (const p of people) {
    const faces = el("div", { class: "faces" });
    for (const t of p.templates.slice(0, 12)) {
      const drop = confirmButton("×", async () => {
        try {
          await post(`/api/templates/${t.id}/remove`, {});
          say(`Removed a template of ${p.name}`, true);
        } catch (e) { say(e.message); }
        loadPeople();
      }, "remove?");
      drop.classList.add("template-remove");
      drop.title = "Remove this template";
      faces.append(el("figure", { class: "template", "data-template": String(t.id) }, [
        el("img", { src: t.thumbnail || "/placeholder.svg", alt: "", title: t.source }), drop]));
    }
    const newName = el("input", { class: "rename-input", placeholder: "New name", maxlength: "256" });
    const rename = el("button", { class: "rename-button", type: "button", text: "Rename" });
    rename.addEventListener("click", async () => {
      try {
        await post("/api/people/rename", { name: p.name, new_name: newName.value });
        say(`Renamed ${p.name} to ${newName.value}`, true);
      } catch (e) { say(e.message); }
      loadPeople();
    });
    const remove = confirmButton("Remove", async () => {
      try {
        await post("/api/people/remove", { name: p.name });
        say(`Removed ${p.name}`, true);
      } catch (e) { say(e.message); }
      loadPeople();
    });
    list.append(el("div", { class: "card person", "data-name": p.name }, [
      el("h2", { text: p.name }),
      el("div", { class: "meta", text: `${p.template_count} template(s)` }),
      faces,
      el("div", { class: "actions" }, [newName, rename, remove]),
    ]));
  }
}

async function addPhotos(ev) {
  ev.preventDefault();
  const name = document.getElementById("add-name").value;
  const files = document.getElementById("add-files").files;
  const form = new FormData();
  for (const f of files) form.append("photo", f, f.name);
  say(`Adding ${files.length} photo(s) for ${name}…`, true);
  try {
    const r = await fetch("/api/people/photos?name=" + encodeURIComponent(name), { method: "POST", body: form });
    const body = await r.json();
    const failed = (body.files || []).filter((f) => f.error).map((f) => f.error);
    if (!r.ok && !body.files) throw new Error(body.error || r.statusText);
    say(`${body.enrolled || 0} template(s) enrolled for ${name}` +
      (body.dropped ? `; ${body.dropped} file(s) over the limit dropped` : "") +
      (failed.length ? `; ${failed.join("; ")}` : ""), r.ok);
  } catch (e) { say(e.message); }
  loadPeople();
}

// POST /api/recognize with the chosen photo: each face's name (or the nearest one) and score.
async function recognize(ev) {
  ev.preventDefault();
  const out = document.getElementById("recognize-result");
  out.textContent = "…";
  try {
    const file = document.getElementById("recognize-file").files[0];
    const r = await api("/api/recognize", { method: "POST", body: file });
    out.textContent = r.faces.length ? r.faces.map((f) => (f.label !== null
      ? `${f.label} (${f.confidence.toFixed(2)})`
      : `unknown (nearest ${f.nearest ?? "none"}, ${f.confidence.toFixed(2)})`)).join("; ") : "no face found";
  } catch (e) { out.textContent = ""; say(e.message); }
}

async function loadUnknowns() {
  const [clusters] = await Promise.all([api("/api/unknowns"), loadPeople()]);
  const list = document.getElementById("unknowns-list");
  list.replaceChildren();
  if (!clusters.length) list.append(el("p", { class: "hint", text: "No unknown faces kept." }));
  for (const c of clusters) {
    const faces = el("div", { class: "faces" });
    for (const f of c.faces)
      faces.append(el("img", { src: f.picture, alt: "", title: `${f.camera} ${time(f.first_seen_ms)}` }));
    const nameInput = el("input", { class: "cluster-name", placeholder: "Name", maxlength: "256" });
    const nameButton = el("button", { class: "cluster-name-button", type: "button", text: "Name" });
    nameButton.addEventListener("click", async () => {
      try {
        const r = await post("/api/unknowns/name", { key: c.key, name: nameInput.value });
        say(`Named ${r.person}: ${r.enrolled} template(s) enrolled`, true);
      } catch (e) { say(e.message); }
      loadUnknowns();
    });
    const merge = el("select", { class: "cluster-merge" }, [el("option", { value: "", text: "Merge into…" })]);
    for (const p of people) merge.append(el("option", { value: p.name, text: p.name }));
    merge.addEventListener("change", async () => {
      if (!merge.value) return;
      try {
        const r = await post("/api/unknowns/merge", { key: c.key, person: merge.value });
        say(`Merged into ${r.person}: ${r.enrolled} template(s) enrolled`, true);
      } catch (e) { say(e.message); }
      loadUnknowns();
    });
    const forget = confirmButton("Forget", async () => {
      try {
        const r = await post("/api/unknowns/forget", { key: c.key });
        say(`Forgot ${r.removed_unknown_faces} face(s)`, true);
      } catch (e) { say(e.message); }
      loadUnknowns();
    });
    const nearest = c.nearest ? `; nearest ${c.nearest.name} (${c.nearest.similarity.toFixed(2)})` : "";
    list.append(el("div", { class: "card cluster", "data-key": c.key }, [
      el("h2", { text: `${c.size} face(s)` }),
      el("div", { class: "meta",
        text: `${c.cameras.join(", ")}; ${time(c.first_seen_ms)} – ${time(c.last_seen_ms)}${nearest}` }),
      faces,
      el("div", { class: "actions" }, [nameInput, nameButton, merge, forget]),
    ]));
  }
}

async function loadEvents(ev) {
  if (ev) ev.preventDefault();
  const q = new URLSearchParams();
  for (const k of ["person", "camera"]) {
    const v = document.getElementById("filter-" + k).value;
    if (v) q.set(k, v);
  }
  const since = document.getElementById("filter-since").value;
  if (since) q.set("since", String(Math.floor(new Date(since).getTime() / 1000)));
  q.set("limit", document.getElementById("filter-limit").value || "100");
  const events = await api("/api/events?" + q);
  const body = document.querySelector("#events-table tbody");
  body.replaceChildren();
  for (const e of events) {
    const epoch = typeof e.epoch_s === "number" ? e.epoch_s * 1000 : Date.parse(e.utc || "");
    const snap = el("td");
    if (typeof e.snapshot_url === "string" && e.snapshot_url.startsWith("/snapshots/")) {
      const url = e.snapshot_url;
      const img = el("img", { src: url, alt: "snapshot" });
      snap.append(el("a", { href: url, target: "_blank", rel: "noopener" }, [img]));
    }
    const conf = typeof e.confidence === "number" ? e.confidence.toFixed(2) : "";
    const dwell = typeof e.dwell_s === "number" ? e.dwell_s.toFixed(1) + " s" : "";
    body.append(el("tr", {}, [
      el("td", { text: time(epoch) }), el("td", { text: String(e.stream ?? "") }),
      el("td", { text: String(e.event ?? "") }), el("td", { text: String(e.label ?? e.label_state ?? "") }),
      el("td", { text: conf }), el("td", { text: dwell }), snap,
    ]));
  }
  if (!events.length) body.append(el("tr", {}, [el("td", { colspan: "7", text: "No events." })]));
}

async function loadCameras() {
  const cameras = await api("/api/cameras");
  const body = document.querySelector("#cameras-table tbody");
  body.replaceChildren();
  for (const c of cameras) {
    const last = c.last_event;
    const lastText = last ? `${last.event ?? ""} ${last.label ?? last.label_state ?? ""} ${last.utc ?? ""}` : "—";
    body.append(el("tr", {}, [
      el("td", { text: c.camera }), el("td", { class: "state-" + c.state, text: c.state }),
      el("td", { text: time(c.since_epoch_s * 1000) }), el("td", { text: c.detail }), el("td", { text: lastText }),
    ]));
  }
  if (!cameras.length) body.append(el("tr", {}, [el("td", { colspan: "5", text: "No cameras." })]));
}

const loaders = { people: loadPeople, unknowns: loadUnknowns, events: loadEvents, cameras: loadCameras };
let current = "people";

async function show(tab) {
  current = tab;
  const s = document.getElementById("status");
  s.textContent = "";
  s.className = "";
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.tab === tab);
  for (const s of document.querySelectorAll("section.tab")) s.hidden = s.id !== tab;
  try { await loaders[tab](); } catch (e) { say(e.message); }
  document.body.dataset.loaded = tab;  // tests wait for this
}

document.addEventListener("DOMContentLoaded", () => {
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => show(b.dataset.tab));
  document.getElementById("add-photos").addEventListener("submit", addPhotos);
  document.getElementById("recognize").addEventListener("submit", recognize);
  document.getElementById("event-filters").addEventListener("submit", loadEvents);
  // The live state refreshes while its tab is open.
  setInterval(() => { if (current === "cameras") loadCameras().catch((e) => say(e.message)); }, 5000);
  show(location.hash.slice(1) in loaders ? location.hash.slice(1) : "people");
});
