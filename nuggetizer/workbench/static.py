"""The workbench's stylesheet and script, served by the app itself (no CDN): every text put
in the page with textContent, never as HTML."""

CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d2327;background:#f6f7f7}
header{background:#1d2327;color:#fff;padding:.5rem 1rem;display:flex;gap:1rem;align-items:center}
header a{color:#cde}header form{margin-left:auto}
main{max-width:1100px;margin:1rem auto;padding:0 1rem}
h1{font-size:1.3rem}h2{font-size:1.1rem;margin:.8rem 0 .3rem}
.box{background:#fff;border:1px solid #dcdcde;border-radius:6px;padding:.7rem 1rem;margin:.6rem 0}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
.q{border-left:4px solid #dcdcde}.q.focus{border-left-color:#2271b1;background:#f0f6fc}
.q.done{border-left-color:#00a32a}
.labels{display:flex;gap:.4rem;flex-wrap:wrap;margin-top:.4rem}
.labels label{border:1px solid #8c8f94;border-radius:4px;padding:.15rem .5rem;cursor:pointer}
.labels input{margin-right:.3rem}
.labels label:has(input:checked){background:#2271b1;color:#fff;border-color:#2271b1}
.panes{display:grid;grid-template-columns:1fr 1fr;gap:.6rem}
.pane{background:#fbfbfc;border:1px solid #e0e0e0;border-radius:4px;padding:.5rem}
#nuggets:focus{outline:none}
.ctx{color:#50575e;font-size:.9em}.hint{color:#50575e;font-size:.85em}
.suggest{color:#8a4b00;font-size:.85em}
table{border-collapse:collapse}td,th{border:1px solid #dcdcde;padding:.2rem .5rem;text-align:left}
#status{font-size:.85em;color:#50575e;min-width:9rem}
.nug input[type=text]{width:100%;font:inherit}.nug{display:grid;grid-template-columns:2rem 1fr 7rem 12rem 5rem;gap:.4rem;align-items:center}
input.span{width:100%;font:inherit;margin-top:.3rem}
"""

JS = r"""
"use strict";
const data = JSON.parse(document.getElementById("wb-data").textContent);
const csrf = document.querySelector("meta[name=csrf]").content;
const statusEl = document.getElementById("status");
const queueKey = "wb-queue-" + data.ref;
let seconds = data.seconds || 0, started = Date.now();
function elapsed(){ return seconds + (Date.now() - started) / 1000; }
function show(text){ if (statusEl) statusEl.textContent = text; }
function queue(){ try { return JSON.parse(localStorage.getItem(queueKey) || "[]"); } catch(e) { return []; } }
let flushing = false;
function drop(body){ const now = queue(); if (now.length && JSON.stringify(now[0]) === JSON.stringify(body)) now.shift(); localStorage.setItem(queueKey, JSON.stringify(now)); }
async function flush(){
  if (flushing) return;
  flushing = true;
  let ok = true;
  try {
    for (let body = queue()[0]; body; body = queue()[0]) {
      let r = null;
      try {
        r = await fetch(data.api, {method: "POST", credentials: "same-origin",
          headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
          body: JSON.stringify(body)});
      } catch (e) { r = null; }
      if (r === null || r.status >= 500) { ok = false; break; }
      drop(body);
      if (!r.ok) { show("refused: " + r.status); continue; }
      const j = await r.json(); if (j.done) document.body.classList.add("done");
    }
  } finally { flushing = false; }
  if (!ok) { show("offline: " + queue().length + " unsaved, retrying"); setTimeout(flush, 2000); }
  else if (queue().length) { setTimeout(flush, 0); }
  else { show("all saved"); document.body.dataset.saved = String(Date.now()); }
}
function save(key, value){
  const q = queue().filter(b => b.key !== key);
  q.push({key: key, value: value, seconds: elapsed()});
  localStorage.setItem(queueKey, JSON.stringify(q));
  show("saving...");
  flush();
}
window.addEventListener("online", flush);
document.addEventListener("DOMContentLoaded", flush);
function typing(e){ const t = e.target; return t && (t.tagName === "INPUT" && t.type === "text" || t.tagName === "TEXTAREA" || t.tagName === "SELECT"); }

// --- questions: digits choose a label, j/k move, s the span, n the next item ---
const qs = Array.from(document.querySelectorAll(".q"));
let at = 0;
function focusQ(i){ if (!qs.length) return; at = Math.max(0, Math.min(qs.length - 1, i));
  qs.forEach((q, k) => q.classList.toggle("focus", k === at));
  qs[at].scrollIntoView({block: "nearest"}); }
qs.forEach((q, i) => {
  q.querySelectorAll("input[type=radio]").forEach(r => r.addEventListener("change", () => {
    save(q.dataset.key, r.value); q.classList.add("done"); focusQ(i + 1); }));
  const span = q.querySelector("input.span");
  if (span) {
    span.addEventListener("change", () => save("span:" + q.dataset.key, span.value));
    span.addEventListener("keydown", e => { if (e.key === "Enter" || e.key === "Escape") { e.preventDefault(); span.blur(); } });
  }
  q.addEventListener("click", () => focusQ(i));
});
if (qs.length) focusQ(qs.findIndex(q => !q.classList.contains("done")) >= 0 ? qs.findIndex(q => !q.classList.contains("done")) : 0);
document.addEventListener("keydown", e => {
  if (typing(e) || e.ctrlKey || e.metaKey || e.altKey || !qs.length) return;
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
  } else if (e.key === "n" && data.next) { location.href = data.next; }
});

// --- post-editing: the list edited in place, saved whole after each change ---
const list = document.getElementById("nuggets");
if (list) {
  let nuggets = data.nuggets.map(n => Object.assign({}, n));
  let row = 0;
  const commit = () => save("nuggets", nuggets);
  function edited(n){ n.source = "post-edit"; }
  function render(){
    list.textContent = "";
    nuggets.forEach((n, i) => {
      const div = document.createElement("div"); div.className = "nug box q" + (i === row ? " focus" : "");
      const num = document.createElement("span"); num.textContent = String(i + 1);
      const text = document.createElement("input"); text.type = "text"; text.value = n.text;
      text.setAttribute("aria-label", "nugget " + (i + 1));
      text.addEventListener("change", () => { if (text.value.trim() && text.value !== n.text) { n.text = text.value; edited(n); commit(); render(); } });
      text.addEventListener("keydown", e => {
        if (e.key === "Enter" && e.ctrlKey) { e.preventDefault(); split(i, text.selectionStart); }
        else if (e.key === "Enter" || e.key === "Escape") { e.preventDefault(); text.blur(); list.focus(); }
      });
      text.addEventListener("focus", () => { row = i; });
      const imp = document.createElement("select");
      ["", ...data.importance].forEach(v => { const o = document.createElement("option"); o.value = v; o.textContent = v || "importance?"; imp.appendChild(o); });
      imp.value = data.importance.includes(n.importance) ? n.importance : "";
      imp.addEventListener("change", () => { n.importance = imp.value || "unjudged"; commit(); });
      const sub = document.createElement("select");
      ["", ...data.sub_narratives].forEach(v => { const o = document.createElement("option"); o.value = v; o.textContent = v || "(no sub-narrative)"; sub.appendChild(o); });
      sub.value = n.mapped_sub_narrative || "";
      sub.addEventListener("change", () => { n.mapped_sub_narrative = sub.value; commit(); });
      const src = document.createElement("span"); src.className = "ctx"; src.textContent = n.source;
      div.append(num, text, imp, sub, src);
      div.addEventListener("click", () => { row = i; mark(); });
      list.appendChild(div);
    });
  }
  function mark(){ Array.from(list.children).forEach((d, k) => d.classList.toggle("focus", k === row)); }
  function split(i, at){
    const n = nuggets[i]; const a = n.text.slice(0, at).replace(/[;,\s]+$/, ""), b = n.text.slice(at).replace(/^[;,.\s]+/, "");
    if (!a || !b) return;
    const second = Object.assign({}, n, {text: b}); n.text = a; edited(n); edited(second);
    nuggets.splice(i + 1, 0, second); row = i + 1; commit(); render();
  }
  window.wbSplit = split;
  document.addEventListener("keydown", e => {
    if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
    const n = nuggets[row];
    const input = () => list.children[row] && list.children[row].querySelector("input");
    if (e.key === "j" || e.key === "ArrowDown") { row = Math.min(nuggets.length - 1, row + 1); mark(); }
    else if (e.key === "k" || e.key === "ArrowUp") { row = Math.max(0, row - 1); mark(); }
    else if (e.key === "v" && n) { n.importance = "vital"; commit(); render(); }
    else if (e.key === "o" && n) { n.importance = "okay"; commit(); render(); }
    else if (e.key === "e" && n) { input().focus(); }
    else if (e.key === "d" && n) { nuggets.splice(row, 1); row = Math.max(0, Math.min(row, nuggets.length - 1)); commit(); render(); }
    else if (e.key === "m" && n && row + 1 < nuggets.length) {
      const next = nuggets[row + 1]; n.text = n.text.replace(/[.\s]+$/, "") + "; " + next.text;
      if (next.importance === "vital") n.importance = "vital"; edited(n); nuggets.splice(row + 1, 1); commit(); render(); }
    else if (e.key === "a") {
      nuggets.splice(row + 1, 0, {text: "new nugget", importance: "unjudged", mapped_sub_narrative: "", source: "post-edit"});
      row = row + (nuggets.length > 1 ? 1 : 0); render(); const i = input(); i.focus(); i.select(); }
    else if (e.key === "n" && data.next) { location.href = data.next; return; }
    else return;
    e.preventDefault();
  });
  render();
}
"""
