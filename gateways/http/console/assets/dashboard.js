// The dashboard's charts (uPlot, served by the console: assets/uplot.js), each drawn from the
// table under it, which is the accessible form of the same numbers: `th[data-series]` name and
// colour the series, `tr[data-x]` the x value (epoch seconds, or a category), `td[data-v]` the
// values. Hovering shows each series' number in the legend; a click opens the row's log link
// (the `a[data-bucket]` of its header cell).
(() => {
  const charts = {};
  window.consoleCharts = charts;
  const tables = document.querySelectorAll('table.chart-data');
  const utc = (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC');

  function draw(table) {
    const box = document.querySelector(`[data-chart-for="${table.id}"]`);
    const rows = Array.from(table.tBodies[0].rows);
    if (!box || typeof uPlot !== 'function' || rows.length === 0) return;
    const heads = Array.from(table.tHead.querySelectorAll('th[data-series]'));
    const category = table.dataset.kind === 'category';
    const labels = rows.map((r) => r.cells[0].textContent.trim());
    const x = rows.map((r, i) => (category ? i : Number(r.dataset.x)));
    const data = [x, ...heads.map((h, s) => rows.map((r) => {
      const v = r.cells[s + 1].dataset.v;
      return v === '' || v === undefined ? null : Number(v);
    }))];
    const daily = !category && x.length > 1 && x[1] - x[0] >= 86400;
    // Categories as bars side by side; a series marked data-scale="n" (a count beside a rate) has its own axis on the right.
    const bars = category && uPlot.paths && uPlot.paths.bars;
    const series = [{ label: table.rows[0].cells[0].textContent, value: category ? (u, v) => (v == null ? '–' : labels[v] ?? '') : undefined }]
      .concat(heads.map((h, s) => ({
        label: h.dataset.series,
        stroke: h.dataset.color,
        fill: category ? h.dataset.color + 'aa' : undefined,
        width: category ? 1 : 2,
        scale: h.dataset.scale || 'y',
        points: { show: !category && rows.length <= 31 },
        paths: bars ? uPlot.paths.bars({ size: [0.8 / heads.length, 48], align: heads.length > 1 ? (s === 0 ? -1 : 1) : 0 }) : undefined,
      })));
    const axes = [
      category ? { splits: () => x, values: (u, splits) => splits.map((i) => labels[i] ?? '') } : {},
      { label: table.dataset.unit, size: 56 },
    ];
    if (heads.some((h) => h.dataset.scale === 'n')) axes.push({ scale: 'n', side: 1, grid: { show: false }, size: 48 });
    const opts = {
      width: Math.max(240, box.clientWidth),
      height: 220,
      series,
      axes,
      scales: {
        x: category ? { time: false, range: (u, min, max) => [min - 0.5, max + 0.5] } : { time: true },
        y: table.dataset.unit.startsWith('%') ? { range: [0, 100] } : { range: (u, min, max) => [0, Math.max(1, max * 1.1)] },
        n: { range: (u, min, max) => [0, Math.max(1, max * 1.1)] },
      },
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
    };
    if (daily) opts.tzDate = utc;
    box.textContent = '';
    const u = new uPlot(opts, data, box);
    u.over.addEventListener('click', () => {
      const link = u.cursor.idx == null ? null : rows[u.cursor.idx]?.cells[0].querySelector('a[data-bucket]');
      if (link) window.location.href = link.href;
    });
    box.dataset.rendered = 'true';
    charts[table.id] = u;
  }

  tables.forEach(draw);
  let pending = 0;
  window.addEventListener('resize', () => {
    clearTimeout(pending);
    pending = setTimeout(() => tables.forEach((t) => {
      const u = charts[t.id];
      const box = document.querySelector(`[data-chart-for="${t.id}"]`);
      if (u && box) u.setSize({ width: Math.max(240, box.clientWidth), height: 220 });
    }), 150);
  });
})();
