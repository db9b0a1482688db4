// irpipe's dashboard pages: the filters (collection, run, metric, and the latency statistic of
// the effectiveness-latency charts), sortable tables, and the charts, drawn by Vega-Lite
// (assets/vega.js) from the rows in the page's JSON block. Nothing is fetched: every byte a
// page needs is in it or beside it.
(function () {
  "use strict";
  const page = JSON.parse(document.getElementById("irpipe-data").textContent);
  const KEYS = ["collection", "run", "metric", "latency"];
  const chosen = { collection: "", run: "", metric: "", latency: "" };
  Object.assign(chosen, page.defaults || {});  // a latency statistic rather than all of them

  // A trend's series (each run's values in evaluation order) as (evaluation, run, value) rows.
  function fromSeries(compact) {
    const found = [];
    Object.keys(compact.series).forEach(function (run) {
      compact.series[run].forEach(function (value, i) {
        if (value !== null) {
          found.push({ evaluation: compact.evaluations[i], run: run, value: value });
        }
      });
    });
    return found;
  }

  // A chart's compact rows as records: coded fields looked up, each evaluation's time added.
  function records(compact) {
    const rows = compact.series ? fromSeries(compact) : compact.rows.map(function (row) {
      const record = {};
      compact.fields.forEach(function (name, i) {
        const codes = compact.dicts[name];
        record[name] = codes ? codes[row[i]] : row[i];
      });
      return record;
    });
    rows.forEach(function (record) {
      if (record.evaluation !== undefined) {  // milliseconds: Vega parses no dates then
        record.time = Date.parse(page.times[String(record.evaluation)]);
      }
    });
    return rows;
  }

  // A trade-off chart is of two metrics, tagged with its latency statistic too: choosing that
  // statistic as the metric shows it.
  function matches(tags) {
    return KEYS.every(function (key) {
      const tag = tags[key];
      return !chosen[key] || tag === undefined || tag === "" || tag === chosen[key] ||
        (key === "metric" && tags.latency === chosen.metric);
    });
  }

  // A latency statistic chosen as the metric is the trade-off charts' statistic too.
  function choose(key, value) {
    chosen[key] = value;
    const latencies = page.filters.latency || [];
    if (key === "metric" && latencies.indexOf(value) >= 0) {
      chosen.latency = value;
      const select = document.querySelector("#filters select[name=latency]");
      if (select) { select.value = value; }
    }
  }

  function tagsOf(element) {
    const tags = {};
    KEYS.forEach(function (k) { tags[k] = element.dataset[k]; });
    return tags;
  }

  // Rows, sections and charts carry their own tags; a metric's column is tagged on its header.
  function applyToElements() {
    const tagged = "[data-collection], [data-run], [data-metric], [data-latency]";
    document.querySelectorAll(tagged).forEach(function (element) {
      element.classList.toggle("filtered-out", !matches(tagsOf(element)));
    });
    document.querySelectorAll("table").forEach(function (table) {
      table.querySelectorAll("thead th").forEach(function (header, column) {
        if (header.dataset.metric === undefined) {
          return;
        }
        const out = header.classList.contains("filtered-out");
        table.querySelectorAll("tbody tr").forEach(function (row) {
          const cell = row.children[column];
          if (cell) { cell.classList.toggle("filtered-out", out); }
        });
      });
    });
  }

  async function draw(chart) {
    const element = document.getElementById(chart.id);
    const spec = JSON.parse(JSON.stringify(page.specs[chart.spec]));
    spec.title = chart.title;
    // The chart's width is its box's now (a phone's or a wide screen's): Vega then lays it
    // out once, where "container" would measure and draw it again.
    spec.width = Math.max(200, element.clientWidth);
    spec.autosize = { type: "fit-x", contains: "padding" };
    spec.datasets = {};
    Object.keys(chart.data).forEach(function (name) {
      spec.datasets[name] = records(chart.data[name]).filter(matches);
    });
    // SVG where it stays light; a canvas for a long history's thousands of points.
    const points = Object.values(spec.datasets).reduce(function (n, rows) { return n + rows.length; }, 0);
    await window.vegaEmbed(element, spec, { actions: false, renderer: points > 2000 ? "canvas" : "svg" });
    element.dataset.drawn = "true";
  }

  // A chart is drawn when it comes near the screen: a long history's page is ready once what
  // is on screen is drawn, and each chart further down takes its turn as it is scrolled to.
  const SCREEN = 300;  // pixels beyond the screen's edges that count as near it
  const waiting = new Map();
  const observer = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting && waiting.has(entry.target.id)) {
        const chart = waiting.get(entry.target.id);
        waiting.delete(entry.target.id);
        observer.unobserve(entry.target);
        queue = queue.then(function () { return draw(chart); });
      }
    });
  }, { rootMargin: SCREEN + "px" });
  let queue = Promise.resolve();

  function onScreen(element) {
    const box = element.getBoundingClientRect();
    return box.bottom > -SCREEN && box.top < window.innerHeight + SCREEN;
  }

  async function drawCharts() {
    const now = [];
    page.charts.forEach(function (chart) {
      const element = document.getElementById(chart.id);
      element.dataset.drawn = "false";
      if (element.classList.contains("filtered-out")) {
        return;
      }
      if (onScreen(element)) {
        now.push(chart);
      } else if (!waiting.has(chart.id)) {
        waiting.set(chart.id, chart);
        observer.observe(element);
      } else {
        waiting.set(chart.id, chart);
      }
    });
    for (const chart of now) {
      await draw(chart);
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
        choose(key, select.value);
        refresh();
      });
      label.appendChild(select);
      form.appendChild(label);
    });
  }

  // A cell's sort key: its data-sort, else the number it shows (4 decimals, a count, an id
  // such as #12, marks and signs around it), else its text.
  const NUMBER = /^[#▲▼ ]*([+-]?[0-9][0-9,]*(\.[0-9]+)?(e[+-]?[0-9]+)?)[*†‡]*$/i;
  function cellValue(row, column) {
    const cell = row.children[column];
    if (!cell) {
      return "";
    }
    const sort = cell.dataset.sort;
    if (sort !== undefined && sort !== "" && !isNaN(Number(sort))) {
      return Number(sort);
    }
    const found = NUMBER.exec(cell.textContent.trim());
    return found ? Number(found[1].replace(/,/g, "")) : cell.textContent;
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
