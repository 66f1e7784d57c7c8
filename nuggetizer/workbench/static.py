"""The workbench's stylesheet and script, served by the app itself (no CDN): every text put
in the page with textContent, never as HTML."""

CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d2327;background:#f6f7f7}
header{background:#1d2327;color:#fff;padding:.5rem 1rem;display:flex;gap:1rem;align-items:center}
header a{color:#cde}header form{margin-left:auto}header form span{margin-right:.4rem}
main{max-width:1400px;margin:1rem auto;padding:0 1rem}
h1{font-size:1.3rem}h2{font-size:1.1rem;margin:.8rem 0 .3rem}h3{font-size:1rem;margin:.5rem 0 .2rem}
h1 small{font-weight:normal;margin-left:.5rem}
.box{background:#fff;border:1px solid #dcdcde;border-radius:6px;padding:.7rem 1rem;margin:.6rem 0}
.narrow{max-width:28rem}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
.md{overflow-wrap:anywhere}.md h1,.md h2,.md h3{font-size:1.05rem;margin:.6rem 0 .2rem}
.md p{margin:.3rem 0}.md ul,.md ol{margin:.3rem 0;padding-left:1.4rem}
.topic .narrative{font-size:1.05em}.topic ol.subs{margin:.2rem 0;padding-left:1.6rem}
.split{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1.15fr);gap:1rem;align-items:start}
.split .side{position:sticky;top:.5rem;max-height:calc(100vh - 1rem);overflow:auto}.split .side .box:first-child{margin-top:0}
@media (max-width:1000px){.split{grid-template-columns:1fr}.split .side{position:static;max-height:none}}
.work{display:grid;grid-template-columns:minmax(0,1fr) 15rem;gap:1rem;align-items:start}
#keys{position:sticky;top:.5rem;font-size:.9em}#keys dl{display:grid;grid-template-columns:auto 1fr;gap:.15rem .5rem;margin:0}
#keys dd{margin:0}body.nokeys .work{grid-template-columns:1fr}body.nokeys #keys{display:none}
@media (max-width:900px){.work{grid-template-columns:1fr}#keys{position:static}}
kbd{font:inherit;font-size:.85em;border:1px solid #8c8f94;border-bottom-width:2px;border-radius:3px;padding:0 .3em;background:#f6f7f7;color:#1d2327}
.q{border-left:4px solid #dcdcde;scroll-margin:4rem}.q.focus{border-left-color:#2271b1;background:#f0f6fc}
.q.done{border-left-color:#00a32a}.q.focus.done{border-left-color:#2271b1}
.num{float:right;color:#50575e;font-size:.85em}
.labels{display:flex;gap:.4rem;flex-wrap:wrap;margin-top:.4rem;align-items:center}
.labels label{border:1px solid #8c8f94;border-radius:4px;padding:.15rem .5rem;cursor:pointer}
.labels input{position:absolute;opacity:0;width:1px;height:1px}
.labels label:has(input:focus-visible){outline:2px solid #2271b1;outline-offset:1px}
.labels label:has(input:checked){background:#2271b1;color:#fff;border-color:#2271b1}
.labels label:has(input:checked) kbd{background:#2271b1;color:#fff;border-color:#fff}
.panes{display:grid;grid-template-columns:1fr 1fr;gap:.6rem}.panes:has(> .pane:only-child){grid-template-columns:1fr}
.pane{background:#fbfbfc;border:1px solid #e0e0e0;border-radius:4px;padding:.5rem}
#nuggets:focus{outline:none}
.ctx{color:#50575e;font-size:.9em}.hint{color:#50575e;font-size:.85em}
.suggest{color:#8a4b00;font-size:.85em}
.error{color:#b32d2e;font-weight:600}.said{color:#006b1b}
.alert{border-color:#d63638;background:#fcf0f1}
table{border-collapse:collapse;background:#fff}td,th{border:1px solid #dcdcde;padding:.2rem .5rem;text-align:left;vertical-align:top}
#status{font-size:.85em;color:#cde;min-width:9rem}
#status.bad{color:#fff;background:#b32d2e;padding:.1rem .5rem;border-radius:3px}#status a{color:#fff}
.nug{display:grid;grid-template-columns:2rem minmax(0,1fr) 6.5rem 15rem 4.5rem;gap:.4rem;align-items:center;padding:.35rem .6rem;margin:.3rem 0;scroll-margin:4rem}
.nug textarea{width:100%;font:inherit;resize:vertical;box-sizing:border-box}.nug select{max-width:100%}
.nug .ntext{white-space:pre-wrap;overflow-wrap:anywhere;cursor:text}
input.span{width:100%;font:inherit;margin-top:.3rem}
a.button,button{display:inline-block;background:#2271b1;color:#fff;border:0;border-radius:4px;padding:.3rem .8rem;font:inherit;text-decoration:none;cursor:pointer}
header button{background:#50575e}
form.inline{display:inline-block;margin:.1rem .3rem .1rem 0}form.inline button{padding:.1rem .5rem;font-size:.9em}
nav.tabs{display:flex;gap:.8rem;margin:.3rem 0 1rem}nav.tabs a[aria-current]{font-weight:700;text-decoration:none;color:#1d2327}
fieldset{border:1px solid #dcdcde;border-radius:4px;margin:.5rem 0}
.adj{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1.4fr);gap:1rem;align-items:start}
.adj-answer{position:sticky;top:.5rem;max-height:90vh;overflow:auto;background:#fbfbfc;border:1px solid #e0e0e0;border-radius:4px;padding:.2rem .7rem}
.dis{padding:.4rem .6rem;margin:.2rem 0}.judges{display:flex;gap:1.2rem;flex-wrap:wrap;margin:.2rem 0}
form.settle{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}form.settle .labels{margin:0}
"""

JS = r"""
"use strict";
const data = JSON.parse(document.getElementById("wb-data").textContent);
const csrf = document.querySelector("meta[name=csrf]").content;
const statusEl = document.getElementById("status");
function show(text, bad){ if (!statusEl) return; statusEl.textContent = text; statusEl.classList.toggle("bad", !!bad); }
function typing(e){ const t = e.target; return t && (t.tagName === "INPUT" && t.type !== "radio" && t.type !== "checkbox" || t.tagName === "TEXTAREA" || t.tagName === "SELECT"); }
function plain(e){ return !(typing(e) || e.ctrlKey || e.metaKey || e.altKey); }

// --- the key map: ? hides or shows it (remembered) ---
if (localStorage.getItem("wb-nokeys") === "1") document.body.classList.add("nokeys");
document.addEventListener("keydown", e => {
  if (plain(e) && e.key === "?") { const off = document.body.classList.toggle("nokeys");
    localStorage.setItem("wb-nokeys", off ? "1" : "0"); e.preventDefault(); } });

// --- the assessor's home: n continues ---
const cont = document.getElementById("continue");
if (cont) document.addEventListener("keydown", e => { if (plain(e) && (e.key === "n" || e.key === "Enter")) { go(cont.href); e.preventDefault(); } });

// --- a form that asks first (ending someone's password or sessions) ---
document.querySelectorAll("form[data-confirm]").forEach(f => f.addEventListener("submit", e => {
  if (!window.confirm(f.dataset.confirm)) e.preventDefault(); }));

// --- the live board reloads itself ---
if (data.reload) setTimeout(() => location.reload(), data.reload * 1000);

// --- time on an item: only while its page is in view and someone is at the keyboard ---
let seconds = data.seconds || 0, lastInput = Date.now();
["keydown", "pointerdown", "wheel"].forEach(t => document.addEventListener(t, () => { lastInput = Date.now(); }, true));
setInterval(() => { if (document.visibilityState === "visible" && Date.now() - lastInput < 120000) seconds += 1; }, 1000);

// --- saves: one queue in the browser for every item, sent one by one, each kept until the
// server has it (a label given just before leaving a page is sent from the next one) ---
const queueKey = "wb-queue";
function queue(){ try { return JSON.parse(localStorage.getItem(queueKey) || "[]"); } catch(e) { return []; } }
let flushing = null, loggedOut = false;
function drop(body){ const now = queue(); if (now.length && JSON.stringify(now[0]) === JSON.stringify(body)) now.shift(); localStorage.setItem(queueKey, JSON.stringify(now)); }
function ended(){
  loggedOut = true;
  const n = queue().length;
  show("", true); statusEl.textContent = "your session has ended: " + n + (n === 1 ? " change" : " changes") + " kept in this browser; ";
  const a = document.createElement("a"); a.href = data.login || "login"; a.textContent = "log in again";
  statusEl.appendChild(a);
}
async function send(){
  let ok = true;
  for (let body = queue()[0]; body; body = queue()[0]) {
    let r = null;
    try {
      r = await fetch(body.api, {method: "POST", credentials: "same-origin",
        headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
        body: JSON.stringify({key: body.key, value: body.value, seconds: body.seconds})});
    } catch (e) { r = null; }
    if (r !== null && (r.status === 401 || r.status === 403)) { ended(); return false; }
    if (r === null || r.status >= 500) { ok = false; break; }
    drop(body);
    if (!r.ok) { show("refused: " + r.status, true); continue; }
    const j = await r.json(); if (body.api === data.api) document.body.classList.toggle("done", !!j.done);
  }
  return ok;
}
function flush(){
  if (loggedOut || !queue().length) { if (!loggedOut && data.api) show("all saved"); return Promise.resolve(true); }
  if (!flushing) flushing = send().then(ok => {
    flushing = null;
    if (loggedOut) return false;
    if (!ok) { show("offline: " + queue().length + " unsaved, retrying", true); setTimeout(flush, 2000); return false; }
    if (queue().length) return flush();
    show("all saved"); document.body.dataset.saved = String(Date.now()); return true;
  });
  return flushing;
}
function save(key, value){
  const q = queue().filter(b => !(b.api === data.api && b.key === key));
  q.push({api: data.api, key: key, value: value, seconds: Math.round(seconds)});
  localStorage.setItem(queueKey, JSON.stringify(q));
  show("saving...");
  flush();
}
window.addEventListener("online", flush);
if (csrf) flush();
// leaving a page waits (a little) for its saves: the next page does not start with them unsent
async function go(url){
  if (!url) return;
  if (queue().length && !loggedOut) await Promise.race([flush(), new Promise(r => setTimeout(r, 3000))]);
  location.href = url;
}

// --- questions (and the organizer's disagreements): digits choose, j/k move ---
const qs = Array.from(document.querySelectorAll(".q"));
let at = 0;
function focusQ(i){ if (!qs.length) return; at = Math.max(0, Math.min(qs.length - 1, i));
  qs.forEach((q, k) => q.classList.toggle("focus", k === at));
  qs[at].scrollIntoView({block: "nearest"}); }
qs.forEach((q, i) => {
  const settle = q.querySelector("form.settle");
  q.querySelectorAll("input[type=radio]").forEach(r => r.addEventListener("change", () => {
    if (settle) { settle.requestSubmit(); return; }
    save(q.dataset.key, r.value); q.classList.add("done"); focusQ(i + 1); }));
  const span = q.querySelector("input.span");
  if (span) {
    span.addEventListener("change", () => save("span:" + q.dataset.key, span.value));
    span.addEventListener("keydown", e => { if (e.key === "Enter" || e.key === "Escape") { e.preventDefault(); span.blur(); } });
  }
  q.addEventListener("click", () => focusQ(i));
});
if (qs.length) { const open = qs.findIndex(q => !q.classList.contains("done")); focusQ(open >= 0 ? open : 0); }
document.addEventListener("keydown", e => {
  if (!plain(e) || !qs.length) return;
  const q = qs[at];
  if (/^[1-9]$/.test(e.key)) {
    const r = q.querySelectorAll("input[type=radio]")[Number(e.key) - 1];
    if (r) { r.checked = true; r.dispatchEvent(new Event("change")); e.preventDefault(); }
  } else if (e.key === "j" || e.key === "ArrowDown") { focusQ(at + 1); e.preventDefault(); }
  else if (e.key === "k" || e.key === "ArrowUp") { focusQ(at - 1); e.preventDefault(); }
  else if (e.key === "s") {
    const span = q.querySelector("input.span"); if (!span) return;
    const picked = String(window.getSelection() || "").trim();
    if (picked) { span.value = picked; save("span:" + q.dataset.key, picked); }
    else { span.focus(); }
    e.preventDefault();
  } else if (e.key === "n" && data.next) { go(data.next); e.preventDefault(); }
  else if (e.key === "p" && data.prev) { go(data.prev); e.preventDefault(); }
});

// --- post-editing: the list edited in place, saved whole after each change ---
const list = document.getElementById("nuggets");
if (list) {
  let nuggets = data.nuggets.map(n => Object.assign({}, n));
  let row = 0;
  const commit = () => save("nuggets", nuggets);
  const subs = data.sub_narratives || [];
  function edited(n){ n.source = "post-edit"; }
  function newId(){ return "new-" + Math.random().toString(36).slice(2, 10); }
  function inView(){ const d = list.children[row]; if (d) d.scrollIntoView({block: "nearest"}); }
  function option(select, value, label){ const o = document.createElement("option"); o.value = value; o.textContent = label; select.appendChild(o); }
  function back(){ list.focus({preventScroll: true}); }
  function render(){
    list.textContent = "";
    nuggets.forEach((n, i) => {
      const div = document.createElement("div"); div.className = "nug box q" + (i === row ? " focus" : "") + (data.importance.includes(n.importance) ? " done" : "");
      const num = document.createElement("span"); num.textContent = String(i + 1);
      const text = document.createElement("div"); text.className = "ntext"; text.textContent = n.text;
      text.setAttribute("aria-label", "nugget " + (i + 1));
      text.addEventListener("click", () => { row = i; edit(); });
      const imp = document.createElement("select"); imp.setAttribute("aria-label", "importance " + (i + 1));
      option(imp, "", "importance?"); data.importance.forEach(v => option(imp, v, v));
      imp.value = data.importance.includes(n.importance) ? n.importance : "";
      imp.addEventListener("change", () => { n.importance = imp.value || "unjudged"; n.set = true; commit(); imp.blur(); back(); render(); });
      const sub = document.createElement("select"); sub.setAttribute("aria-label", "sub-narrative " + (i + 1));
      option(sub, "", "(no sub-narrative)"); subs.forEach((v, k) => option(sub, v, (k + 1) + ". " + v));
      sub.value = n.mapped_sub_narrative || "";
      sub.addEventListener("change", () => { n.mapped_sub_narrative = sub.value; commit(); sub.blur(); back(); });
      const src = document.createElement("span"); src.className = "ctx"; src.textContent = n.source;
      div.append(num, text, imp, sub, src);
      div.addEventListener("click", () => { row = i; mark(); });
      list.appendChild(div);
    });
    inView();
  }
  function edit(){
    const div = list.children[row], n = nuggets[row]; if (!div || !n) return;
    const shown = div.querySelector(".ntext"); if (!shown) return;
    const box = document.createElement("textarea"); box.value = n.text; box.rows = Math.max(1, Math.ceil(n.text.length / 70));
    box.setAttribute("aria-label", "nugget " + (row + 1) + " text");
    let done = false;
    const keep = () => { if (done) return; done = true; if (box.value.trim() && box.value !== n.text) { n.text = box.value.replace(/\s*\n\s*/g, " "); edited(n); commit(); } render(); back(); };
    box.addEventListener("keydown", e => {
      if (e.key === "Enter" && e.ctrlKey) { e.preventDefault(); done = true; const at = box.selectionStart; n.text = box.value; split(row, at); }
      else if (e.key === "Enter") { e.preventDefault(); keep(); }
      else if (e.key === "Escape") { e.preventDefault(); done = true; render(); back(); }
    });
    box.addEventListener("blur", keep);
    shown.replaceWith(box); box.focus(); box.setSelectionRange(box.value.length, box.value.length);
  }
  function mark(){ Array.from(list.children).forEach((d, k) => d.classList.toggle("focus", k === row)); inView(); }
  function split(i, cut){
    const n = nuggets[i]; const a = n.text.slice(0, cut).replace(/[;,\s]+$/, ""), b = n.text.slice(cut).replace(/^[;,.\s]+/, "");
    if (!a || !b) return;
    const second = Object.assign({}, n, {text: b, id: newId()}); n.text = a; edited(n); edited(second);
    nuggets.splice(i + 1, 0, second); row = i + 1; commit(); render(); back();
  }
  document.addEventListener("keydown", e => {
    if (!plain(e)) return;
    const n = nuggets[row];
    if (e.key === "j" || e.key === "ArrowDown") { row = Math.min(nuggets.length - 1, row + 1); mark(); }
    else if (e.key === "k" || e.key === "ArrowUp") { row = Math.max(0, row - 1); mark(); }
    else if ((e.key === "v" || e.key === "o") && n) { n.importance = e.key === "v" ? "vital" : "okay"; n.set = true; commit(); render(); }
    else if (/^[0-9]$/.test(e.key) && n) {
      const k = Number(e.key); if (k > subs.length) return;
      n.mapped_sub_narrative = k ? subs[k - 1] : ""; commit(); render(); }
    else if (e.key === "e" && n) { edit(); }
    else if (e.key === "d" && n) { nuggets.splice(row, 1); row = Math.max(0, Math.min(row, nuggets.length - 1)); commit(); render(); }
    else if (e.key === "m" && n && row + 1 < nuggets.length) {
      const next = nuggets[row + 1]; n.text = n.text.replace(/[.\s]+$/, "") + "; " + next.text;
      if (next.importance === "vital") n.importance = "vital"; edited(n); nuggets.splice(row + 1, 1); commit(); render(); }
    else if (e.key === "a") {
      nuggets.splice(row + 1, 0, {id: newId(), text: "new nugget", importance: "unjudged", mapped_sub_narrative: "", source: "post-edit"});
      row = row + (nuggets.length > 1 ? 1 : 0); render(); edit(); const box = list.children[row].querySelector("textarea"); if (box) box.select(); }
    else if (e.key === "n" && data.next) { go(data.next); }
    else if (e.key === "p" && data.prev) { go(data.prev); }
    else return;
    e.preventDefault();
  });
  render();
}
"""
