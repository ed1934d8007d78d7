// llmgw map: draws the fleet from the JSON above into elements that carry
// the data attributes docs/map.md names, then wires the filter. Built with
// DOM calls (never HTML strings), so no id or name from an input file is
// ever read as markup. Synchronous on purpose: once the page has loaded,
// every GPU cell is in the DOM (headless browsers and tests read it then).
(function () {
  "use strict";
  var t0 = performance.now();
  var D = JSON.parse(document.getElementById("map-data").textContent);
  var S = D.states, M = D.models, H = D.holders;
  function el(tag, cls) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    return e;
  }
  function who(h) {
    var t = M[h[1]] + " r" + h[2];
    t += h[3] === null ? " (profile not known)" : " profile " + h[3];
    if (h[4] !== null) t += ", " + h[4];
    return t + "\n" + (S[h[0]] === "new" ? "placed on " : S[h[0]] === "pending" ? "waiting for " : "on ") + h[5];
  }
  // The attributes and tooltip of one GPU or MIG device.
  function cell(e, id, what, st, h, cls) {
    var s = S[st];
    e.setAttribute("data-node", id);
    e.setAttribute("data-state", s);
    var c = "s-" + s;
    var tip = what + "\n";
    if (h >= 0) {
      var r = H[h];
      e.setAttribute("data-model", M[r[1]]);
      e.setAttribute("data-replica", String(r[2]));
      if (s !== "held" && D.colored[r[1]]) c += " m" + r[1];
      tip += s + ": " + who(r);
    } else {
      tip += s;
    }
    e.className = cls + " " + c;
    e.title = tip;
  }
  function bar(box, label, used, total, fmt) {
    var l = el("span");
    l.textContent = label + " " + fmt(used) + "/" + fmt(total);
    var b = el("span", "bar" + (used >= total ? " full" : ""));
    var i = el("i");
    i.style.width = Math.min(100, total > 0 ? (100 * used) / total : 100).toFixed(1) + "%";
    b.appendChild(i);
    box.appendChild(l);
    box.appendChild(b);
  }
  function cpus(m) {
    return String(Math.round(m / 100) / 10);
  }
  function gib(m) {
    return Math.floor(m / 1024) + "G";
  }
  var nodes = []; // [element, lower-case text the filter matches, cells]
  function drawNode(ni) {
    var n = D.nodes[ni], id = n[0];
    var box = el("div", "node");
    box.setAttribute("data-node", id);
    box.setAttribute("data-node-state", n[1]);
    var head = el("div", "nh");
    var name = el("span", "id");
    name.textContent = id;
    head.appendChild(name);
    if (n[1] !== "ready") {
      var st = el("span", "st");
      st.textContent = n[1];
      head.appendChild(st);
    }
    head.title = id + " (" + n[1] + ")" + (n[5] ? "\n" + n[5] : "");
    box.appendChild(head);
    if (n[2] || n[3]) {
      var bars = el("div", "bars");
      if (n[2]) bar(bars, "CPU", n[2][0], n[2][1], cpus);
      if (n[3]) bar(bars, "mem", n[3][0], n[3][1], gib);
      box.appendChild(bars);
    }
    var text = id.toLowerCase(), cells = [];
    if (n[4].length) {
      var gpus = el("div", "gpus");
      n[4].forEach(function (g) {
        var what = id + " GPU " + g[0] + " (" + D.classes[g[1]] + ")";
        var e;
        if (g.length > 4) {
          e = el("span");
          cell(e, id, what + ", MIG mode", g[2], g[3], "g mig");
          e.className = "g mig"; // its devices carry the colours
          e.setAttribute("data-gpu", String(g[0]));
          g[4].forEach(function (d) {
            var x = el("i");
            var p = D.migs[d[1]];
            cell(x, id, id + " GPU " + g[0] + " MIG " + d[0] + " (" + p + ")", d[2], d[3], "d");
            x.setAttribute("data-gpu", String(g[0]));
            x.setAttribute("data-mig", p);
            x.setAttribute("data-mig-index", String(d[0]));
            e.appendChild(x);
            cells.push(x);
            if (d[3] >= 0) text += " " + M[H[d[3]][1]].toLowerCase();
          });
        } else {
          e = el("i");
          cell(e, id, what, g[2], g[3], "g");
          e.setAttribute("data-gpu", String(g[0]));
        }
        if (g[3] >= 0) text += " " + M[H[g[3]][1]].toLowerCase();
        cells.push(e);
        gpus.appendChild(e);
      });
      box.appendChild(gpus);
    }
    nodes.push([box, text, cells]);
    return box;
  }
  var grid = document.getElementById("grid");
  var sections = [];
  var kinds = { nvlink: "NVLink domain", fabric: "fabric" };
  D.pools.forEach(function (p) {
    var sec = el("section", "pool");
    sec.setAttribute("data-pool", p[1]);
    sec.setAttribute("data-pool-kind", p[0]);
    var h = el("h2");
    var k = el("span", "kind");
    k.textContent = p[1] ? kinds[p[0]] + " " : "";
    h.appendChild(k);
    h.appendChild(document.createTextNode((p[1] || "Nodes on no fabric") + " (" + p[2].length + " node" + (p[2].length === 1 ? ")" : "s)")));
    sec.appendChild(h);
    var box = el("div", "nodes");
    var first = nodes.length;
    p[2].forEach(function (ni) {
      box.appendChild(drawNode(ni));
    });
    sec.appendChild(box);
    grid.appendChild(sec);
    sections.push([sec, first, nodes.length]);
  });
  // The filter: nodes whose id, or a model they hold, contains a word
  // typed; in them, cells of other models dimmed; unplaced runs of other
  // models hidden.
  var input = document.getElementById("filter");
  var unplaced = Array.prototype.slice.call(document.querySelectorAll("[data-unplaced]"));
  var legend = Array.prototype.slice.call(document.querySelectorAll("[data-legend]"));
  function apply() {
    var words = input.value.toLowerCase().split(/[\s,]+/).filter(Boolean);
    function hit(t) {
      return !words.length || words.some(function (w) { return t.indexOf(w) >= 0; });
    }
    var models = words.length && M.some(function (m) { return hit(m.toLowerCase()); });
    nodes.forEach(function (n) {
      var show = hit(n[1]);
      n[0].hidden = !show;
      if (!show) return;
      n[2].forEach(function (c) {
        var m = c.getAttribute("data-model");
        c.classList.toggle("dim", !!models && !(m && hit(m.toLowerCase())));
      });
    });
    sections.forEach(function (s) {
      var any = false;
      for (var i = s[1]; i < s[2] && !any; i++) any = !nodes[i][0].hidden;
      s[0].hidden = !any;
    });
    unplaced.forEach(function (u) {
      u.hidden = !!words.length && !hit(u.getAttribute("data-unplaced").toLowerCase());
    });
    legend.forEach(function (l) {
      l.classList.toggle("dim", !!models && !hit(l.getAttribute("data-legend").toLowerCase()));
    });
  }
  var timer = 0;
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(apply, 120);
  });
  legend.forEach(function (l) {
    l.addEventListener("click", function () {
      input.value = input.value === l.getAttribute("data-legend") ? "" : l.getAttribute("data-legend");
      apply();
    });
  });
  // Opened as map.html#filter=llama: filtered from the start.
  var m = /^#filter=(.*)$/.exec(location.hash);
  if (m) {
    input.value = decodeURIComponent(m[1]);
    apply();
  }
  document.documentElement.setAttribute("data-drawn-ms", String(Math.round(performance.now() - t0)));
})();
