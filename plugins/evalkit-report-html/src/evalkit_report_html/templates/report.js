// evalkit-report-html: render every chart with vega-embed (SVG), then announce it.
// Each chart's element gets data-rendered="true" and an "evalkit:chart-rendered" event;
// when all are drawn, window.evalkitRendered is true and document receives
// "evalkit:rendered". A chart that fails is logged with console.error.
(function () {
  "use strict";
  var charts = JSON.parse(document.getElementById("evalkit-charts").textContent);
  var options = { mode: "vega-lite", renderer: "svg", actions: false,
                  tooltip: { theme: "light" } };
  window.evalkitRendered = false;
  var jobs = charts.map(function (c) {
    var el = document.getElementById(c.id);
    return window.vegaEmbed(el, c.spec, options).then(function (result) {
      el.setAttribute("data-rendered", "true");
      el.dispatchEvent(new CustomEvent("evalkit:chart-rendered",
        { bubbles: true, detail: { id: c.id, kind: c.kind } }));
      return result;
    });
  });
  Promise.all(jobs).then(function () {
    window.evalkitRendered = true;
    document.documentElement.setAttribute("data-rendered", "true");
    document.dispatchEvent(new CustomEvent("evalkit:rendered"));
  }).catch(function (err) {
    window.evalkitRenderError = String(err);
    console.error("evalkit: a chart could not be drawn: " + err);
  });

  // sortable tables: a click on a heading with data-col sorts by that column
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
})();
