// wikic viewer: cited-line highlighting, client-side search, graph filters, the ask box and
// live reload. Text from the wiki is only ever put in the page with textContent.
"use strict";

function wikicRoot() { return document.body.dataset.root || ""; }

// --- citations: #L3 or #L3-L5 highlights those lines and scrolls them into view ----------
function highlightCited() {
  var m = /^#L(\d+)(?:-L(\d+))?$/.exec(location.hash);
  var lines = document.querySelectorAll(".line.hl");
  for (var i = 0; i < lines.length; i++) lines[i].classList.remove("hl");
  if (!m) return;
  var start = parseInt(m[1], 10), end = parseInt(m[2] || m[1], 10), first = null;
  for (var n = start; n <= end; n++) {
    var el = document.getElementById("L" + n);
    if (el) { el.classList.add("hl"); first = first || el; }
  }
  if (first) first.scrollIntoView({block: "center"});
}

// --- search over titles, aliases and text, ranked here in the browser ----------------------
function terms(text) { return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) || []); }

function scoreEntry(entry, words) {
  var title = entry.t.toLowerCase(), aliases = entry.a.join(" ").toLowerCase();
  var text = entry.x.toLowerCase(), score = 0;
  for (var i = 0; i < words.length; i++) {
    var w = words[i], hit = false;
    if (title.indexOf(w) >= 0) { score += 10; hit = true; }
    if (aliases.indexOf(w) >= 0) { score += 6; hit = true; }
    var at = text.indexOf(w), count = 0;
    while (at >= 0 && count < 20) { count++; at = text.indexOf(w, at + w.length); }
    if (count) { score += 1 + Math.log(count); hit = true; }
    if (!hit) return 0;  // every word must appear somewhere
  }
  if (title === words.join(" ")) score += 20;
  return score;
}

function snippet(text, words) {
  var lower = text.toLowerCase(), at = -1;
  for (var i = 0; i < words.length && at < 0; i++) at = lower.indexOf(words[i]);
  var start = Math.max(0, at - 80), piece = text.slice(start, start + 220);
  var out = document.createElement("div");
  out.className = "snippet";
  var pattern = new RegExp("(" + words.map(function (w) {
    return w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }).join("|") + ")", "gi");
  var last = 0, m;
  if (start > 0) out.appendChild(document.createTextNode("… "));
  while ((m = pattern.exec(piece)) !== null) {
    out.appendChild(document.createTextNode(piece.slice(last, m.index)));
    var mark = document.createElement("mark");
    mark.textContent = m[0];
    out.appendChild(mark);
    last = m.index + m[0].length;
  }
  out.appendChild(document.createTextNode(piece.slice(last) + (start + 220 < text.length ? " …" : "")));
  return out;
}

function runSearch() {
  var box = document.getElementById("search-q"), list = document.getElementById("search-results");
  var data = window.WIKIC_SEARCH || [];
  var q = new URLSearchParams(location.search).get("q") || "";
  if (box && !box.value) box.value = q;
  var words = terms(q);
  list.textContent = "";
  if (!words.length) return;
  var found = [];
  for (var i = 0; i < data.length; i++) {
    var s = scoreEntry(data[i], words);
    if (s > 0) found.push([s, data[i]]);
  }
  // Ties by address too: the index's pieces load in any order of pages.
  found.sort(function (a, b) { return b[0] - a[0] || a[1].t.localeCompare(b[1].t) || (a[1].u < b[1].u ? -1 : 1); });
  document.getElementById("search-count").textContent = found.length + " pages match";
  found.slice(0, 50).forEach(function (pair) {
    var e = pair[1], li = document.createElement("li"), a = document.createElement("a");
    a.href = wikicRoot() + e.u;
    a.textContent = e.t;
    a.className = "result";
    li.appendChild(a);
    if (e.y) { var t = document.createElement("span"); t.className = "type"; t.textContent = e.y; li.appendChild(document.createTextNode(" ")); li.appendChild(t); }
    li.appendChild(snippet(e.x, words));
    list.appendChild(li);
  });
}

// --- graph filters: hide the pages of a type, or the sources ------------------------------
function graphFilters() {
  var form = document.getElementById("graph-filters");
  if (!form) return;
  form.addEventListener("change", function (ev) {
    var type = ev.target.dataset.type, show = ev.target.checked;
    document.querySelectorAll('.wiki-graph a.node[data-type="' + CSS.escape(type) + '"]').forEach(function (el) {
      el.classList.toggle("hidden", !show);
    });
    if (type === "sources") {
      document.querySelectorAll(".wiki-graph line.feeds").forEach(function (el) { el.classList.toggle("hidden", !show); });
    }
  });
}

// --- the ask box: streams `wikic ask`'s answer, then its cited pages ----------------------
function askBox() {
  var form = document.getElementById("ask-form");
  if (!form) return;
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var out = document.getElementById("ask-answer"), cited = document.getElementById("ask-pages");
    var question = document.getElementById("ask-question").value;
    out.textContent = ""; out.className = "answer"; cited.textContent = "";
    fetch(wikicRoot() + "api/ask", {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({question: question})}).then(function (resp) {
      var reader = resp.body.getReader(), decoder = new TextDecoder(), buffer = "";
      function handle(line) {
        if (!line) return;
        var msg = JSON.parse(line);
        if (msg.text) out.textContent += msg.text;
        if (msg.error) { out.className = "answer error"; out.textContent = msg.error; }
        if (msg.done) {
          out.dataset.done = "1";
          (msg.pages || []).forEach(function (p) {
            var li = document.createElement("li"), a = document.createElement("a");
            a.href = wikicRoot() + p.href; a.textContent = p.title; li.appendChild(a); cited.appendChild(li);
          });
        }
      }
      function pump() {
        return reader.read().then(function (r) {
          buffer += decoder.decode(r.value || new Uint8Array(), {stream: !r.done});
          var lines = buffer.split("\n");
          buffer = lines.pop();
          lines.forEach(handle);
          if (r.done) { handle(buffer); return; }
          return pump();
        });
      }
      return pump();
    }).catch(function (err) { out.className = "answer error"; out.textContent = String(err); });
  });
}

// --- live reload under `wikic serve --watch`: reload after a build that changed this view --
function liveReload() {
  var body = document.body;
  if (body.dataset.live !== "1") return;
  var seen = parseInt(body.dataset.build, 10) || 0;
  function poll() {
    fetch(wikicRoot() + "api/build?path=" + encodeURIComponent(body.dataset.watch || ""), {cache: "no-store"})
      .then(function (r) { return r.json(); })
      .then(function (s) { if (s.changed > seen) location.reload(); else setTimeout(poll, 500); })
      .catch(function () { setTimeout(poll, 2000); });
  }
  setTimeout(poll, 500);
}

document.addEventListener("DOMContentLoaded", function () {
  if (document.getElementById("lines")) { highlightCited(); window.addEventListener("hashchange", highlightCited); }
  if (document.getElementById("search-results")) runSearch();
  graphFilters();
  askBox();
  liveReload();
});
