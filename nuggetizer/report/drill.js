// The report's drill-down pages (report/drill.py writes their data): one renderer for every run
// page and topic page. Offline: the data are scripts beside the pages (data/index.js, the
// names; data/topics/*.js, each topic's key, answers, verdicts and judgments, deflated and in
// base 85, inflated by the browser's DecompressionStream). Tables sort by `sortable`, written
// above this by report/drill.py. Every text is set as text; only the
// methods' own pieces of HTML, escaped when written, are set as HTML.
"use strict";
(function () {
  const D = window.DRILL;
  const page = window.PAGE;
  const up = "../";
  const waiting = {};
  const VERDICT = {s: "support", p: "partial_support", n: "not_support", u: "unjudged",
                   "-": "not judged"};

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined) node.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  function html(text) {  // a method's piece, escaped by the method when written
    const box = document.createElement("div");
    box.innerHTML = text;
    return box;
  }

  function number(k, v) {
    if (v === null || v === undefined) return "-";
    return D.index.counts[k] && Number.isInteger(v) ? String(v) : v.toFixed(4);
  }

  function cell(text, href, sort, cls) {
    const td = el("td", {class: cls || null, "data-v": sort === undefined || sort === null
                         ? null : String(sort)});
    td.append(href ? el("a", {href: href}, text) : text);
    return td;
  }

  function table(head, rows, classes) {
    const t = el("table", {}, el("thead", {}, el("tr", {}, ...head.map(h => el("th", {}, h)))));
    const body = el("tbody");
    for (const row of rows) {
      body.append(el("tr", {}, ...row.map((c, i) => {
        if (c instanceof Node) return c;
        return cell(c, null, null, classes[i] || null);
      })));
    }
    t.append(body);
    return t;
  }

  const BASE85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" +
    "!#$%&()*+-;<=>?@^_`{|}~";
  const digit = new Uint8Array(128);
  for (let i = 0; i < BASE85.length; i++) digit[BASE85.charCodeAt(i)] = i;

  function base85(text, length) {  // 5 digits, most significant first, for each 4 bytes
    const bytes = new Uint8Array(text.length / 5 * 4);
    for (let i = 0, o = 0; i < text.length; i += 5, o += 4) {
      let v = 0;
      for (let j = 0; j < 5; j++) v = v * 85 + digit[text.charCodeAt(i + j)];
      bytes[o] = v >>> 24; bytes[o + 1] = (v >>> 16) & 255;
      bytes[o + 2] = (v >>> 8) & 255; bytes[o + 3] = v & 255;
    }
    return bytes.subarray(0, length);
  }

  async function inflate(length, text) {
    const bytes = base85(text, length);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return JSON.parse(await new Response(stream).text());
  }

  // a topic's data file calls this as it loads
  D.topic = function (k, length, text) {
    const found = inflate(length, text);
    if (waiting[k]) waiting[k].resolve(found); else waiting[k] = {promise: found};
  };

  function load(k) {  // the data of topic k (its script added to the page when first asked)
    if (!waiting[k]) {
      let resolve;
      const promise = new Promise(r => { resolve = r; });
      waiting[k] = {promise: promise, resolve: resolve};
      if (!page.data) document.head.append(el("script", {src: up + D.index.topics[k][3]}));
    }
    return waiting[k].promise;
  }

  function verdicts(data, codes) {  // the nuggets of the key, each with this answer's verdict
    const list = el("ul", {class: "nuggets"});
    data.key.forEach((n, i) => {
      const code = VERDICT[codes[i] || "-"];
      list.append(el("li", {class: code.replace(" ", "_")}, code.replace("_", " ") + ": " +
                     n[0] + " ", el("small", {}, "(" + [n[1], n[2]].filter(x => x)
                                                 .join("; ") + ")")));
    });
    return list;
  }

  function judgment(data, entry) {  // [run, answer index, verdict codes, pieces]
    const box = el("div", {class: "judgment"});
    if (entry[1] !== null && entry[1] >= 0) box.append(el("div", {class: "answer"},
                                                           data.answers[entry[1]]));
    if (entry[2] !== null && data.key.length) box.append(verdicts(data, entry[2]));
    for (const piece of entry[3] || []) box.append(html(piece));
    return box;
  }

  function runPage() {
    const run = page.run;
    const measures = D.index.measures;
    const rows = [];
    const sections = [];
    D.index.topics.forEach((t, k) => {
      const values = page.scores[k];
      const has = page.judged === true || page.judged.includes(k);
      rows.push([cell(t[0], up + t[2], null, "text run"), cell(t[1], null, null, "text"),
                 ...measures.map((m, i) => cell(number(i, values ? values[i] : null), null,
                                                values ? values[i] : null)),
                 has ? cell("below", "#t" + k) : cell("-")]);
      if (!has) return;
      const body = el("div", {}, "loading ...");
      const section = el("details", {id: "t" + k},
                         el("summary", {}, el("b", {}, el("a", {href: up + t[2]}, t[0])),
                            ": " + t[1]), body);
      section.addEventListener("toggle", () => {
        if (!section.open || section.dataset.shown) return;
        section.dataset.shown = "1";
        load(k).then(data => {
          const entry = data.runs.find(e => e[0] === run);
          body.replaceChildren(entry ? judgment(data, entry) : "no judgment");
          if (location.hash === "#" + section.id) section.scrollIntoView();
        });
      });
      sections.push(section);
    });
    const root = document.getElementById("drill");
    root.append(el("h2", {}, "Topics"),
                table(["topic", "query", ...measures, "judgment"], rows, []));
    if (!sections.length) return;
    const all = el("button", {type: "button"}, "Show every judgment");
    all.addEventListener("click", () => sections.forEach(s => { s.open = true; }));
    root.append(el("h2", {}, "Judgments"),
                el("p", {}, "Each topic's judgment opens with a click (its data are read " +
                   "then). ", all), ...sections);
    const wanted = location.hash.match(/^#t(\d+)$/);
    sections.forEach(s => {
      if (D.index.open || (wanted && s.id === "t" + wanted[1])) s.open = true;
    });
  }

  function judged(r) { return page.judged === true || page.judged.includes(r); }

  function topicPage() {  // the key, the answers best first, then every run's scores
    const k = page.topic;
    const measures = D.index.measures;
    const root = document.getElementById("drill");
    const rows = page.scores.map(([r, ...values]) => {
      const run = D.index.runs[r];
      return [cell(String(run[1]), null, run[1]),
              cell(run[0], up + run[2] + (judged(r) ? "#t" + k : ""), null, "text name"),
              ...values.map((v, i) => cell(number(i, v), null, v))];
    });
    const scores = [el("h2", {id: "scores"}, "Every run's scores on this topic"),
                    el("div", {class: "wide"},
                       table(["overall rank", "run", ...measures], rows, []))];
    if (!page.data) {
      root.append(...scores);
      return;
    }
    const body = el("div", {}, "loading ...");
    root.append(body);
    load(k).then(data => {
      const parts = [];
      const order = new Map(page.scores.map(([r], i) => [r, i]));
      const entries = data.runs.slice().sort((a, b) => (order.get(a[0]) ?? 1e9) -
                                             (order.get(b[0]) ?? 1e9));
      const answers = data.answers.length;
      parts.push(el("p", {}, ...[data.key.length ? el("a", {href: "#key"}, "The answer key")
                                                  : null,
                                 el("a", {href: "#answers"}, answers ? "The answers"
                                                                     : "The judgments"),
                                 el("a", {href: "#scores"}, "Every run's scores")]
                    .filter(x => x).flatMap((a, i) => i ? [" \u00b7 ", a] : [a])));
      if (data.key.length) {
        parts.push(el("h2", {id: "key"}, "The answer key (" + data.key.length + " nuggets)"));
        const keyRows = data.key.map((n, i) => {
          const by = {s: [], p: []};
          for (const e of entries) if (e[2] && by[e[2][i]]) by[e[2][i]].push(e[0]);
          const names = list => list.length ? el("details", {},
            el("summary", {}, String(list.length)),
            el("small", {}, list.map(r => D.index.runs[r][1] + ". " + D.index.runs[r][0])
                                 .join(", "))) : "0";
          return [String(i + 1), cell(n[0], null, null, "text"), n[1], n[2] || "-",
                  el("td", {"data-v": by.s.length, class: "text"}, names(by.s)),
                  el("td", {"data-v": by.p.length, class: "text"}, names(by.p))];
        });
        parts.push(el("div", {class: "wide"},
                      table(["#", "nugget", "importance", "sub-narrative",
                             "runs: support", "partial support"], keyRows,
                            ["", "text", "text", "text"])));
      }
      parts.push(el("h2", {id: "answers"}, answers ? "The answers, best first"
                                                   : "The judgments, by run"));
      entries.forEach((e, i) => {
        const run = D.index.runs[e[0]];
        const score = page.scores[order.get(e[0])];
        const said = score ? ", " + D.index.measures[D.index.primary] + " " +
          number(D.index.primary, score[1 + D.index.primary]) : "";
        parts.push(el("details", {open: i < 3 || !answers ? "" : null},
                      el("summary", {}, (i + 1) + ". ",
                         el("a", {href: up + run[2] + "#t" + k}, run[0]),
                         " (rank " + run[1] + " overall" + said + ")"), judgment(data, e)));
      });
      body.replaceChildren(...parts, ...scores);
      if (window.sortable) body.querySelectorAll("table").forEach(window.sortable);
      document.body.dataset.drawn = "1";
    });
  }

  if (page.kind === "run") runPage(); else topicPage();
  document.querySelectorAll("table").forEach(window.sortable);
})();
