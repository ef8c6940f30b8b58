// evalkit-report-html: what the page does with JavaScript. The charts are SVG drawn when
// the report was written and show without it; this script adds the hover over a mark,
// sorting tables by a heading, and the filter by metric and candidate.
// Each chart's element gets data-rendered="true" and an "evalkit:chart-rendered" event;
// then window.evalkitRendered is true and document receives "evalkit:rendered".
(function () {
  "use strict";
  var hover = JSON.parse(document.getElementById("evalkit-hover").textContent);

  // ------------------------------------------------------------------ hover
  var tip = document.createElement("div");
  tip.id = "evalkit-tooltip";
  tip.setAttribute("role", "tooltip");
  tip.hidden = true;
  document.body.appendChild(tip);

  // [[label, value], ...] for a mark: its own text (aria-label: forest plot, density),
  // or the query a per-query bar or a scatter's point stands for
  function describe(figure, mark) {
    var own = mark.getAttribute("aria-label");
    if (own) { return [[null, own]]; }
    var chart = hover.charts && hover.charts[figure.id];
    if (!chart || mark.tagName.toLowerCase() !== "path") { return null; }
    var marks = mark.parentNode.querySelectorAll(":scope > path");
    var k = Array.prototype.indexOf.call(marks, mark);
    var row = hover.rows[String(chart[0])];
    var j = chart[1] ? chart[1][k] : k;
    if (row === undefined || j === undefined) { return null; }
    var q = row[6] ? row[6][j] : j;
    var out = [["query", hover.ids[q]]];
    if (hover.texts[q]) { out.push(["text", hover.texts[q]]); }
    out.push([row[1], hover.series[row[3]][j]], [row[2], hover.series[row[4]][j]],
             ["difference", hover.series[row[5]][j]]);
    return out;
  }

  function show(lines, event) {
    tip.textContent = "";
    var table = document.createElement("table");
    lines.forEach(function (line) {
      var tr = table.insertRow();
      if (line[0] !== null) {
        var key = tr.insertCell();
        key.className = "key";
        key.textContent = line[0];
      }
      var value = tr.insertCell();
      value.textContent = line[1];
    });
    tip.appendChild(table);
    tip.hidden = false;
    var x = event.clientX + 14, y = event.clientY + 14;
    var box = tip.getBoundingClientRect();
    if (x + box.width > window.innerWidth) { x = Math.max(0, event.clientX - box.width - 14); }
    if (y + box.height > window.innerHeight) { y = Math.max(0, event.clientY - box.height - 14); }
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }

  document.addEventListener("mouseover", function (event) {
    var mark = event.target;
    var figure = mark.closest ? mark.closest("figure.chart") : null;
    var group = mark.parentNode;
    var lines = figure && group && group.classList && group.classList.contains("role-mark")
      ? describe(figure, mark) : null;
    if (lines) { show(lines, event); } else { tip.hidden = true; }
  });

  // ------------------------------------------------------------------ sortable tables
  // a click on a heading with data-col sorts by that column
  function cellValue(row, col, numeric) {
    var cell = row.cells[col];
    if (!cell) { return numeric ? Infinity : ""; }
    if (numeric) {
      var key = cell.getAttribute("data-sort");
      var value = parseFloat(key === null ? cell.textContent : key);
      return isNaN(value) ? Infinity : value;
    }
    return cell.textContent;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th[data-col]").forEach(function (th) {
      th.addEventListener("click", function () {
        var col = parseInt(th.getAttribute("data-col"), 10);
        var numeric = th.getAttribute("data-type") === "num";
        var down = th.getAttribute("data-order") !== "asc";
        th.setAttribute("data-order", down ? "asc" : "desc");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, col, numeric), y = cellValue(b, col, numeric);
          var order = numeric ? x - y : String(x).localeCompare(String(y), undefined,
            { numeric: true });
          return down ? order : -order;
        });
        var frag = document.createDocumentFragment();
        rows.forEach(function (r) { frag.appendChild(r); });
        body.appendChild(frag);
      });
    });
  });

  // ------------------------------------------------------------------ filter
  // hides the summary rows, sections, contents' links and columns of the table of every
  // query that belong to another metric or candidate (a column of baseline values has
  // no candidate: it stays while its metric does)
  var form = document.getElementById("filter");
  if (form) {
    var style = document.createElement("style");
    document.head.appendChild(style);
    var metric = form.elements.namedItem("metric");
    var candidate = form.elements.namedItem("candidate");
    var apply = function () {
      var m = metric ? metric.value : "", c = candidate ? candidate.value : "";
      var keep = function (el) {
        var em = el.getAttribute("data-metric"), ec = el.getAttribute("data-candidate");
        return (!m || !em || em === m) && (!c || !ec || ec === c);
      };
      var rows = document.querySelectorAll("#summary-table tbody tr");
      var shown = 0;
      rows.forEach(function (tr) { tr.hidden = !keep(tr); shown += tr.hidden ? 0 : 1; });
      document.querySelectorAll("section.row, #contents [data-metric]").forEach(
        function (el) { el.hidden = !keep(el); });
      document.getElementById("filter-count").textContent =
        (m || c) ? shown + " of " + rows.length + " comparisons shown" : "";
      var rules = [];
      var table = document.getElementById("query-table");
      if (table && table.tHead && table.tHead.rows.length > 1) {
        var heads = table.tHead.rows[1].cells;
        var offset = table.tBodies[0].rows.length
          ? table.tBodies[0].rows[0].cells.length - heads.length : 0;
        var visible = {};
        Array.prototype.forEach.call(heads, function (th, j) {
          var name = th.getAttribute("data-metric");
          visible[name] = (visible[name] || 0) + (keep(th) ? 1 : 0);
          if (!keep(th)) {
            rules.push("#query-table thead tr:nth-child(2) th:nth-child(" + (j + 1) + ")",
                       "#query-table tbody td:nth-child(" + (offset + j + 1) + ")");
          }
        });
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
          var name = th.getAttribute("data-metric");
          if (name === null) { return; }
          th.hidden = !visible[name];
          th.colSpan = visible[name] || 1;
        });
      }
      style.textContent = rules.length ? rules.join(",\n") + " { display: none; }" : "";
    };
    [metric, candidate].forEach(function (select) {
      if (select) { select.addEventListener("change", apply); }
    });
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    form.hidden = false;
    apply();
  }

  // ------------------------------------------------------------------ announce
  document.querySelectorAll("figure.chart").forEach(function (el) {
    el.setAttribute("data-rendered", "true");
    el.dispatchEvent(new CustomEvent("evalkit:chart-rendered",
      { bubbles: true, detail: { id: el.id, kind: el.getAttribute("data-kind") } }));
  });
  window.evalkitRendered = true;
  document.documentElement.setAttribute("data-rendered", "true");
  document.dispatchEvent(new CustomEvent("evalkit:rendered"));
})();
