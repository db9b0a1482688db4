// irpipe's dashboard pages: the filters (collection, run, metric), sortable tables, and the
// charts, drawn by Vega-Lite (assets/vega.js) from the rows in the page's JSON block. Nothing is
// fetched: every byte a page needs is in it or beside it.
(function () {
  "use strict";
  const page = JSON.parse(document.getElementById("irpipe-data").textContent);
  const KEYS = ["collection", "run", "metric"];
  const chosen = { collection: "", run: "", metric: "" };

  // A chart's compact rows as records: coded fields looked up, each evaluation's time added.
  function records(compact) {
    return compact.rows.map(function (row) {
      const record = {};
      compact.fields.forEach(function (name, i) {
        const codes = compact.dicts[name];
        record[name] = codes ? codes[row[i]] : row[i];
      });
      if (record.evaluation !== undefined) {
        record.time = page.times[String(record.evaluation)];
      }
      return record;
    });
  }

  function matches(tags) {
    return KEYS.every(function (key) {
      return !chosen[key] || tags[key] === undefined || tags[key] === "" || tags[key] === chosen[key];
    });
  }

  function applyToElements() {
    KEYS.forEach(function (key) {
      document.querySelectorAll("[data-" + key + "]").forEach(function (element) {
        const tags = {};
        KEYS.forEach(function (k) { tags[k] = element.dataset[k]; });
        element.classList.toggle("filtered-out", !matches(tags));
      });
    });
  }

  async function drawCharts() {
    for (const chart of page.charts) {
      const element = document.getElementById(chart.id);
      if (element.classList.contains("filtered-out")) {
        continue;
      }
      const spec = JSON.parse(JSON.stringify(chart.spec));
      spec.datasets = {};
      Object.keys(chart.data).forEach(function (name) {
        spec.datasets[name] = records(chart.data[name]).filter(matches);
      });
      await window.vegaEmbed(element, spec, { actions: false, renderer: "svg" });
    }
  }

  function buildFilters() {
    const form = document.getElementById("filters");
    KEYS.forEach(function (key) {
      const values = page.filters[key] || [];
      if (values.length < 2) {
        return;
      }
      const label = document.createElement("label");
      label.textContent = key + " ";
      const select = document.createElement("select");
      select.name = key;
      select.add(new Option("all", ""));
      values.forEach(function (value) { select.add(new Option(value, value)); });
      select.value = chosen[key] || "";
      select.addEventListener("change", function () {
        chosen[key] = select.value;
        refresh();
      });
      label.appendChild(select);
      form.appendChild(label);
    });
  }

  function cellValue(row, column) {
    const cell = row.children[column];
    if (!cell) {
      return "";
    }
    const sort = cell.dataset.sort;
    return sort !== undefined && sort !== "" && !isNaN(Number(sort)) ? Number(sort) : cell.textContent;
  }

  function sortable(table) {
    table.querySelectorAll("thead th").forEach(function (header, column) {
      header.tabIndex = 0;
      header.setAttribute("aria-sort", "none");
      const sort = function () {
        const ascending = header.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("thead th").forEach(function (h) { h.setAttribute("aria-sort", "none"); });
        header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort(function (a, b) {
          const x = cellValue(a, column), y = cellValue(b, column);
          const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      };
      header.addEventListener("click", sort);
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sort(); }
      });
    });
  }

  async function refresh() {
    document.body.dataset.ready = "false";
    applyToElements();
    await drawCharts();
    document.body.dataset.ready = "true";
  }

  buildFilters();
  document.querySelectorAll("table.sortable").forEach(sortable);
  refresh();
})();
