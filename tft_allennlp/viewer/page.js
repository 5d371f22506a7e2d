/* tft-show's page (tft_allennlp/viewer/html_page.py): draws the bars and links that the markup
   declares, once the words are laid out, and adds hovering, pinning and the keyboard. Nothing
   is fetched. With #self-check in the address, the page checks its own drawing and writes the
   result into body[data-self-check]. */
(function () {
  "use strict";
  var TRACK = 6; // pair_figure.TRACK_HEIGHT
  var BAR_OFFSET = 4; // from the words to the nearest track
  var NAMES = { paraphrase: "paraphrase", in_paraphrase: "in-paraphrase", random: "random" };
  var body = document.body;
  var pairs = Array.prototype.slice.call(document.querySelectorAll("section.pair"));
  var current = -1;

  function all(root, selector) {
    return Array.prototype.slice.call(root.querySelectorAll(selector));
  }
  function span(text) {
    var parts = text.split(" ");
    return [Number(parts[0]), Number(parts[1])];
  }
  function escapeText(text) {
    var div = document.createElement("div");
    div.textContent = text;
    return div.innerHTML;
  }
  function words(figure, side) {
    return all(figure, ".sentence." + side + " .w");
  }
  function phrase(figure, side, text) {
    var s = span(text);
    return words(figure, side)
      .slice(s[0], s[1] + 1)
      .map(function (w) { return w.textContent; })
      .join(" ");
  }

  // Drawing

  function draw(figure) {
    var canvas = figure.querySelector(".canvas");
    if (!canvas.offsetWidth) return false; // inside a closed <details>: drawn when opened
    var sides = {
      source: { words: words(figure, "source"), row: figure.querySelector(".sentence.source") },
      target: { words: words(figure, "target"), row: figure.querySelector(".sentence.target") }
    };
    var sourceEdge = sides.source.row.offsetTop + sides.source.row.offsetHeight;
    var targetEdge = sides.target.row.offsetTop;
    function extent(side, text) {
      var s = span(text), ws = sides[side].words;
      var first = ws[s[0]], last = ws[s[1]];
      return { left: first.offsetLeft, right: last.offsetLeft + last.offsetWidth };
    }
    var anchors = { source: {}, target: {} };
    all(figure, ".bar").forEach(function (bar) {
      var side = bar.getAttribute("data-side"), key = bar.getAttribute("data-span");
      var e = extent(side, key), track = Number(bar.getAttribute("data-track"));
      var x1 = e.left + 2, x2 = Math.max(e.right - 2, x1 + 4);
      var y = side === "source"
        ? sourceEdge + BAR_OFFSET + track * TRACK
        : targetEdge - BAR_OFFSET - track * TRACK;
      var tick = side === "source" ? -3 : 3;
      bar.setAttribute("d", "M" + x1 + " " + (y + tick) + "V" + y + "H" + x2 + "V" + (y + tick));
      anchors[side][key] = { x: (x1 + x2) / 2, y: y };
    });
    all(figure, "g.link").forEach(function (link) {
      var s = anchors.source[link.getAttribute("data-source")];
      var t = anchors.target[link.getAttribute("data-target")];
      var middle = (s.y + t.y) / 2;
      var d = "M" + s.x + " " + s.y + "C" + s.x + " " + middle + " " + t.x + " " + middle +
        " " + t.x + " " + t.y;
      all(link, "path").forEach(function (path) { path.setAttribute("d", d); });
      var dot = link.querySelector(".dot");
      if (dot) {
        dot.setAttribute("cx", (s.x + t.x) / 2);
        dot.setAttribute("cy", middle);
      }
    });
    all(figure, "g.missed").forEach(function (missed) {
      var s = extent("source", missed.getAttribute("data-source"));
      var t = extent("target", missed.getAttribute("data-target"));
      var sx = (s.left + s.right) / 2, tx = (t.left + t.right) / 2;
      var sy = sourceEdge + 1, ty = targetEdge - 1, middle = (sy + ty) / 2;
      missed.querySelector("path").setAttribute("d", "M" + sx + " " + sy + "C" + sx + " " +
        middle + " " + tx + " " + middle + " " + tx + " " + ty);
    });
    figure.setAttribute("data-drawn", "1");
    return true;
  }

  function drawAll() {
    all(document, ".figure").forEach(draw);
  }

  // Pointing at links, bars and words

  function linksOf(figure, side, key) {
    return all(figure, "g.link").filter(function (link) {
      return link.getAttribute("data-" + side) === key && link.getBoundingClientRect().width +
        link.getBoundingClientRect().height > 0;
    });
  }

  function describe(figure, link) {
    var label = link.getAttribute("data-label");
    var parts = [
      "<b>" + escapeText(phrase(figure, "source", link.getAttribute("data-source"))) +
        "</b> ⇄ <b>" + escapeText(phrase(figure, "target", link.getAttribute("data-target"))) +
        "</b>",
      "corpus: " + NAMES[label] + " (" + link.getAttribute("data-relation") + " words)"
    ];
    var probabilities = link.getAttribute("data-probabilities");
    if (probabilities) {
      var p = JSON.parse(probabilities), predicted = link.getAttribute("data-predicted");
      var shown = Object.keys(p).sort(function (a, b) { return p[b] - p[a]; }).map(function (k) {
        return NAMES[k] + " " + p[k].toFixed(3);
      });
      parts.push("model: " + shown.join(", ") + " → <span class=\"" +
        (predicted === label ? "right" : "not-right") + "\">" + NAMES[predicted] + "</span>");
    } else if (body.getAttribute("data-model") === "1") {
      parts.push("model: not seen (truncated, or no wordpieces)");
    }
    var gold = link.getAttribute("data-gold");
    if (gold) parts.push("gold: <span class=\"" + gold + "\">" + gold + "</span>");
    return parts.join(" · ");
  }

  function highlight(figure, links, bars, text) {
    clear(figure);
    figure.classList.add("focus");
    var hotWords = { source: {}, target: {} };
    links.forEach(function (link) {
      link.classList.add("hot");
      ["source", "target"].forEach(function (side) {
        var key = link.getAttribute("data-" + side), s = span(key);
        for (var i = s[0]; i <= s[1]; i++) hotWords[side][i] = true;
        all(figure, ".bar." + side + "[data-span=\"" + key + "\"]").forEach(function (bar) {
          bar.classList.add("hot");
        });
      });
      var row = rowOf(figure, link);
      if (row) row.classList.add("hot");
    });
    (bars || []).forEach(function (bar) { bar.classList.add("hot"); });
    ["source", "target"].forEach(function (side) {
      words(figure, side).forEach(function (w, i) {
        if (hotWords[side][i]) w.classList.add("hot");
      });
    });
    info(figure).innerHTML = text;
  }

  function rowOf(figure, link) {
    var table = figure.nextElementSibling && figure.nextElementSibling.nextElementSibling;
    if (!table || !table.classList.contains("numbers")) return null;
    return table.querySelector("tr[data-k=\"" + link.getAttribute("data-k") + "\"]");
  }

  function info(figure) {
    return figure.nextElementSibling;
  }

  function clear(figure) {
    figure.classList.remove("focus");
    all(figure, ".hot").forEach(function (element) { element.classList.remove("hot"); });
    var table = figure.nextElementSibling && figure.nextElementSibling.nextElementSibling;
    if (table && table.classList.contains("numbers")) {
      all(table, "tr.hot").forEach(function (row) { row.classList.remove("hot"); });
    }
  }

  function point(figure, target) {
    var link = target.closest("g.link");
    if (link) {
      highlight(figure, [link], [], describe(figure, link));
      return true;
    }
    if (target.classList.contains("bar")) {
      var side = target.getAttribute("data-side"), key = target.getAttribute("data-span");
      var links = linksOf(figure, side, key);
      var other = side === "source" ? "target" : "source";
      var partners = links.map(function (l) {
        return "<b>" + escapeText(phrase(figure, other, l.getAttribute("data-" + other))) +
          "</b> (" + NAMES[l.getAttribute("data-label")] + ")";
      });
      highlight(figure, links, [target], "<b>" + escapeText(phrase(figure, side, key)) +
        "</b> → " + (partners.join(", ") || "no link shown"));
      return true;
    }
    if (target.classList.contains("w")) {
      var row = target.parentElement, wordSide = row.getAttribute("data-side");
      var index = Number(target.getAttribute("data-i"));
      var containing = all(figure, "g.link").filter(function (l) {
        var s = span(l.getAttribute("data-" + wordSide));
        return s[0] <= index && index <= s[1] && l.getBoundingClientRect().width +
          l.getBoundingClientRect().height > 0;
      });
      highlight(figure, containing, [], "<b>" + escapeText(target.textContent) + "</b>: in " +
        containing.length + " linked phrase" + (containing.length === 1 ? "" : "s"));
      return true;
    }
    return false;
  }

  var pinned = new Map();
  // The address of a pair's kept link, to send: #pair-N/link-K.
  function remember(figure) {
    var kept = pinned.get(figure), link = kept && kept.closest && kept.closest("g.link");
    if (link && figure.classList.contains("pair")) {
      history.replaceState(null, "", "#" + figure.closest("section.pair").id + "/link-" +
        (Number(link.getAttribute("data-k")) + 1));
    }
  }
  function restore(figure) {
    var keep = pinned.get(figure);
    if (keep) point(figure, keep);
    else {
      clear(figure);
      info(figure).innerHTML = "";
    }
  }

  all(document, ".figure").forEach(function (figure) {
    figure.addEventListener("mouseover", function (event) {
      if (!pinned.get(figure)) point(figure, event.target);
    });
    figure.addEventListener("mouseleave", function () { restore(figure); });
    figure.addEventListener("click", function (event) {
      if (pinned.get(figure) === event.target) pinned.delete(figure);
      else if (point(figure, event.target)) pinned.set(figure, event.target);
      restore(figure);
      remember(figure);
    });
  });
  all(document, "details").forEach(function (details) {
    details.addEventListener("toggle", function () {
      if (details.open) all(details, ".figure").forEach(draw);
    });
  });
  all(document, "details.numbers tr[data-k]").forEach(function (row) {
    row.addEventListener("mouseenter", function () {
      var figure = row.closest("details").previousElementSibling.previousElementSibling;
      var link = figure.querySelector("g.link[data-k=\"" + row.getAttribute("data-k") + "\"]");
      if (link) point(figure, link);
    });
    row.addEventListener("mouseleave", function () {
      restore(row.closest("details").previousElementSibling.previousElementSibling);
    });
  });

  // Filters, toggles and the keyboard

  var filter = document.getElementById("filter");
  var negatives = document.getElementById("negatives");
  var tables = document.getElementById("tables");
  function applyFilter() {
    var key = filter.value, shown = 0;
    pairs.forEach(function (pair) {
      var visible = key === "all" || pair.getAttribute("data-" + key) === "1";
      pair.hidden = !visible;
      if (visible) shown += 1;
    });
    document.getElementById("shown-count").textContent = "showing " + shown + " of " +
      pairs.length + " pairs";
    drawAll();
  }
  filter.addEventListener("change", applyFilter);
  negatives.addEventListener("change", function () {
    body.classList.toggle("no-negatives", !negatives.checked);
  });
  tables.addEventListener("change", function () {
    all(document, "details.numbers").forEach(function (d) { d.open = tables.checked; });
  });

  function visiblePairs() {
    return pairs.filter(function (pair) { return !pair.hidden; });
  }
  function go(step) {
    var visible = visiblePairs();
    if (!visible.length) return;
    var at = visible.indexOf(pairs[current]);
    var next = visible[Math.min(Math.max(at + step, 0), visible.length - 1)];
    if (at < 0) next = visible[0];
    if (current >= 0) pairs[current].classList.remove("current");
    current = pairs.indexOf(next);
    next.classList.add("current");
    next.focus({ preventScroll: true });
    next.scrollIntoView({ block: "start" });
  }
  function cycleLink(step) {
    if (current < 0) go(1);
    var figure = pairs[current].querySelector(".figure");
    var links = all(figure, "g.link").filter(function (l) {
      return l.getBoundingClientRect().width + l.getBoundingClientRect().height > 0;
    });
    if (!links.length) return;
    var at = links.indexOf(pinned.get(figure) && pinned.get(figure).closest("g.link"));
    var next = links[(at + step + links.length) % links.length];
    pinned.set(figure, next);
    restore(figure);
    remember(figure);
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (/^(INPUT|SELECT|TEXTAREA)$/.test(event.target.tagName)) return;
    var actions = {
      j: function () { go(1); },
      n: function () { go(1); },
      k: function () { go(-1); },
      p: function () { go(-1); },
      l: function () { cycleLink(1); },
      h: function () { cycleLink(-1); },
      i: function () { negatives.click(); },
      t: function () { tables.click(); },
      r: function () {
        var randoms = all(document, "details.random-pair");
        var open = !randoms.some(function (d) { return d.open; });
        randoms.forEach(function (d) { d.open = open; });
      },
      Escape: function () {
        pinned.clear();
        all(document, ".figure").forEach(restore);
      }
    };
    if (actions[event.key]) {
      actions[event.key]();
      event.preventDefault();
    }
  });

  // An address #pair-N, or #pair-N/link-K: that pair, with its K-th phrase pair kept.
  function openAddress() {
    var match = /^#pair-(\d+)(?:\/link-(\d+))?$/.exec(location.hash);
    if (!match) return;
    var section = document.getElementById("pair-" + match[1]);
    if (!section) return;
    current = pairs.indexOf(section);
    section.classList.add("current");
    var figure = section.querySelector(".figure");
    var link = match[2] && figure.querySelector("g.link[data-k=\"" + (Number(match[2]) - 1) +
      "\"]");
    if (link) {
      if (link.classList.contains("in_paraphrase") && !negatives.checked) negatives.click();
      pinned.set(figure, link);
      restore(figure);
    }
    var box = section.getBoundingClientRect();
    if (box.top < 0 || box.bottom > window.innerHeight) section.scrollIntoView({ block: "start" });
  }

  applyFilter();
  openAddress();
  if (document.fonts && document.fonts.ready) document.fonts.ready.then(drawAll);
  window.addEventListener("load", drawAll);
  window.addEventListener("resize", drawAll);

  // The self-check (#self-check): everything opened, drawn and measured.

  function nonEmpty(element) {
    var box = element.getBoundingClientRect();
    return box.width + box.height > 0;
  }
  function selfCheck() {
    all(document, "details").forEach(function (d) { d.open = true; });
    if (!negatives.checked) negatives.click();
    drawAll();
    var links = all(document, "g.link"), bars = all(document, ".bar");
    var missed = all(document, "g.missed"), wordBoxes = all(document, ".w");
    var empty = [];
    links.concat(missed).forEach(function (g) {
      var line = g.querySelector(".line");
      if (!line.getAttribute("d") || !nonEmpty(line)) {
        empty.push(g.closest("section").id + " link " + g.getAttribute("data-source") + " / " +
          g.getAttribute("data-target"));
      }
    });
    bars.forEach(function (bar) {
      if (!bar.getAttribute("d") || !nonEmpty(bar)) {
        empty.push(bar.closest("section").id + " bar " + bar.getAttribute("data-side") + " " +
          bar.getAttribute("data-span"));
      }
    });
    wordBoxes.forEach(function (w) {
      if (!nonEmpty(w)) empty.push(w.closest("section").id + " word " + w.textContent);
    });
    // Pointing at a link lights its two phrases and shows its numbers.
    var pointing = null;
    if (links.length) {
      var link = links[0], figure = link.closest(".figure");
      link.querySelector(".hit").dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
      pointing = link.classList.contains("hot") &&
        figure.querySelectorAll(".bar.hot").length === 2 &&
        figure.querySelectorAll(".w.hot").length > 0 &&
        info(figure).textContent.indexOf("⇄") >= 0;
      restore(figure);
    }
    document.dispatchEvent(new KeyboardEvent("keydown", { key: "j", bubbles: true }));
    var keyboard = pairs.length === 0 || pairs[0].classList.contains("current");
    body.setAttribute("data-self-check", JSON.stringify({
      pairs: pairs.length,
      figures: all(document, ".figure").length,
      drawn: all(document, ".figure[data-drawn]").length,
      links: links.length,
      bars: bars.length,
      missed: missed.length,
      words: wordBoxes.length,
      empty: empty.slice(0, 20),
      pointing: pointing,
      keyboard: keyboard,
      errors: window.tftErrors || []
    }));
  }
  if (location.hash === "#self-check") selfCheck();
})();
