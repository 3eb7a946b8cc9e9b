// The audience builder (pages/audience-builder.ts): a visual editor of the Grammar B filter in
// the #audience-filter text area (spec 3 §2.3, §2.4). The filter object itself is the model:
// the builder edits its `root` and rewrites the JSON; JSON typed into the text area redraws
// the builder. A debounced POST to the console's count endpoint shows the live match count.
// DOM built with createElement and textContent only (no innerHTML, no eval: the CSP allows none).
(() => {
  const form = document.getElementById('builder-form');
  const tree = document.getElementById('builder-tree');
  const json = document.getElementById('audience-filter');
  if (!form || !tree || !json) return;
  const jsonError = document.getElementById('builder-json-error');
  const countOut = document.getElementById('builder-count');
  const projectSelect = document.getElementById('builder-project');
  const catalog = JSON.parse(form.dataset.catalog || '{}');
  const PERIODS = ['min', 'hour', 'day', 'week', 'month', 'year'];
  let model = {};

  // ---- small DOM helpers ----
  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') node.className = v;
      else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(typeof c === 'string' ? document.createTextNode(c) : c);
    return node;
  };
  const select = (label, options, value, onchange) => {
    const s = el('select', { 'aria-label': label, onchange: () => onchange(s.value) });
    const values = options.map((o) => (typeof o === 'string' ? { value: o, label: o } : o));
    if (value !== undefined && !values.some((o) => o.value === value)) values.unshift({ value, label: `${value} (not in the specs)` });
    for (const o of values) s.append(el('option', { value: o.value, selected: o.value === value }, o.label));
    return s;
  };
  const input = (label, type, value, oninput, extra) => {
    const i = el('input', { type, 'aria-label': label, value: value === null || value === undefined ? '' : String(value), ...(extra || {}) });
    i.addEventListener('input', () => oninput(i.value));
    return i;
  };
  const button = (label, onclick, cls) => el('button', { type: 'button', class: cls || 'small', onclick }, label);

  // ---- types and operators (from core/filters/grammar-b/fields.ts, sent by the page) ----
  const attributeType = (key) => (catalog.attributes.find((a) => a.key === key) || { type: 'custom' }).type;
  const eventKeyType = (event, key) => {
    const native = catalog.eventNative.find((a) => a.key === key);
    if (native) return native.type;
    const type = catalog.events.find((e) => e.type === event);
    return ((type && type.parameters.find((p) => p.key === key)) || { type: 'custom' }).type;
  };
  const operatorsFor = (type, onEvent, key) => {
    const out = [];
    for (const o of catalog.operators) {
      if (!o.types.includes(type)) continue;
      if (o.op === 'range-date-dayversary' && !(onEvent && (catalog.eventNative.find((a) => a.key === key) || {}).dayversary)) continue;
      out.push(o.op);
      if (o.negatable) out.push(`${o.op}-not`);
    }
    return out;
  };
  const baseOf = (operator) => String(operator || '').replace(/-not$/, '');
  const defaultValues = (operator) => {
    switch (baseOf(operator)) {
      case 'matches-bool': return [true];
      case 'range-number': return { lowerNumber: null, upperNumber: null };
      case 'matches-date': return { date: new Date().toISOString().slice(0, 10) };
      case 'range-date': return { lowerDate: null, upperDate: null };
      case 'range-date-relative': return { lowerOffset: -30, upperOffset: 0, lowerOffsetPeriod: 'day', upperOffsetPeriod: 'day' };
      case 'range-date-anniversary': return { mode: 'relative', lowerOffsetDays: 0, upperOffsetDays: 7 };
      case 'range-date-timeversary': return { mode: 'relative', lowerOffsetMinutes: -60, upperOffsetMinutes: 1 };
      case 'range-date-dayversary': return { lowerDay: '100', upperDay: '523' };
      case 'geopoint-distance': return { latitude: 52.52, longitude: 13.405, distance: 10 };
      default: return [];
    }
  };

  // ---- value editors: each edits `cond.values` in place and calls changed() ----
  const numberOrNull = (text) => (text.trim() === '' || Number.isNaN(Number(text)) ? null : Number(text));
  const objectValues = (cond) => {
    if (!cond.values || typeof cond.values !== 'object' || Array.isArray(cond.values)) cond.values = {};
    return cond.values;
  };
  const field = (cond, name, label, type, parse) => input(label, type, objectValues(cond)[name], (v) => { objectValues(cond)[name] = parse(v); changed(); }, { class: `v-${type}` });

  /** A tag list of strings or numbers with the any (||) / all (&&) switch of spec 3 §2.4 rule 2. */
  const tags = (cond, numeric) => {
    if (!Array.isArray(cond.values)) cond.values = [];
    const box = el('span', { class: 'tags' });
    const draw = () => {
      box.replaceChildren();
      const all = cond.values[0] === '&&';
      const items = cond.values.filter((v, i) => !(i === 0 && (v === '&&' || v === '||')));
      box.append(select('match', [{ value: '||', label: 'any of' }, { value: '&&', label: 'all of' }], all ? '&&' : '||', (v) => {
        cond.values = v === '&&' ? ['&&', ...items] : items;
        changed();
        draw();
      }));
      items.forEach((item, i) => box.append(el('span', { class: 'tag' }, String(item), button('×', () => {
        items.splice(i, 1);
        cond.values = all ? ['&&', ...items] : items;
        changed();
        draw();
      }, 'tag-remove'))));
      const add = el('input', { type: numeric ? 'number' : 'text', 'aria-label': 'add a value', placeholder: numeric ? 'number, Enter' : 'value, Enter', class: 'tag-input' });
      const take = () => {
        const text = add.value.trim();
        if (!text) return;
        const value = numeric ? Number(text) : text;
        if (numeric && Number.isNaN(value)) return;
        add.value = '';
        items.push(value);
        cond.values = all ? ['&&', ...items] : items;
        changed();
        draw();
        box.querySelector('.tag-input').focus();
      };
      add.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ',') { e.preventDefault(); take(); } });
      add.addEventListener('blur', take);
      box.append(add);
    };
    draw();
    return box;
  };

  const valueEditor = (cond) => {
    const v = cond.values;
    switch (baseOf(cond.operator)) {
      case 'exists': case 'in-segment': case 'match-all': case 'match-none':
        return null;
      case 'matches-bool':
        return select('value', ['true', 'false'], String(Array.isArray(v) ? v[0] !== false : true), (x) => { cond.values = [x === 'true']; changed(); });
      case 'contains': case 'startswith': case 'endswith': case 'matches-string':
        return tags(cond, false);
      case 'matches-number':
        return tags(cond, true);
      case 'range-number':
        return el('span', {}, 'from ', field(cond, 'lowerNumber', 'lower number', 'number', numberOrNull), ' to ', field(cond, 'upperNumber', 'upper number', 'number', numberOrNull));
      case 'matches-date':
        return field(cond, 'date', 'date', 'date', (x) => x);
      case 'range-date':
        return el('span', {}, 'from ', field(cond, 'lowerDate', 'from date', 'date', (x) => x || null), ' to ', field(cond, 'upperDate', 'to date', 'date', (x) => x || null));
      case 'range-date-relative': {
        const o = objectValues(cond);
        const period = (name) => select(name, PERIODS, o[name] || 'day', (x) => { o[name] = x; changed(); });
        return el('span', {}, 'from ', field(cond, 'lowerOffset', 'lower offset', 'number', numberOrNull), period('lowerOffsetPeriod'),
          ' to ', field(cond, 'upperOffset', 'upper offset', 'number', numberOrNull), period('upperOffsetPeriod'), el('span', { class: 'meta' }, ' (negative: past)'));
      }
      case 'range-date-anniversary':
        if (objectValues(cond).mode === 'absolute') break;
        return el('span', {}, 'days from today ', field(cond, 'lowerOffsetDays', 'from day', 'number', numberOrNull), ' to ', field(cond, 'upperOffsetDays', 'to day', 'number', numberOrNull));
      case 'geopoint-distance':
        return el('span', {}, 'within ', field(cond, 'distance', 'distance in km', 'number', numberOrNull), ' km of ',
          field(cond, 'latitude', 'latitude', 'number', numberOrNull), ', ', field(cond, 'longitude', 'longitude', 'number', numberOrNull));
      default:
        break;
    }
    // Other shapes (dayversary, timeversary, absolute anniversaries): the values as JSON.
    const raw = el('input', { type: 'text', class: 'v-json', 'aria-label': 'values (JSON)', value: JSON.stringify(v === undefined ? [] : v) });
    raw.addEventListener('input', () => {
      try { cond.values = JSON.parse(raw.value); raw.classList.remove('bad'); changed(); } catch { raw.classList.add('bad'); }
    });
    return raw;
  };

  // ---- nodes ----
  const newCondition = (type) => {
    if (type === 'event_condition') {
      const key = 'created-at';
      return { type, key, operator: 'range-date-relative', values: defaultValues('range-date-relative') };
    }
    const key = (catalog.attributes[0] || { key: '_email' }).key;
    const operator = operatorsFor(attributeType(key), false, key)[0] || 'exists';
    return { type: 'attribute_condition', key, operator, values: defaultValues(operator) };
  };
  const newEventGroup = () => ({ type: 'group_event', event: (catalog.events[0] || { type: 'purchase' }).type, join: 'and', children: [] });
  const newSegment = () => ({ type: 'segment_condition', key: catalog.segments[0] || '_all', operator: 'in-segment', values: [] });

  const conditionRow = (cond, onEvent, event, remove) => {
    const keys = onEvent
      ? [...catalog.eventNative.map((a) => a.key), ...((catalog.events.find((e) => e.type === event) || { parameters: [] }).parameters.map((p) => p.key))]
      : catalog.attributes.map((a) => a.key);
    const type = onEvent ? eventKeyType(event, cond.key) : attributeType(cond.key);
    const ops = operatorsFor(type, onEvent, cond.key);
    const row = el('div', { class: 'b-row', 'data-node': cond.type });
    row.append(
      select(onEvent ? 'parameter' : 'attribute', keys.map((k) => ({ value: k, label: k })), cond.key, (k) => {
        cond.key = k;
        const next = operatorsFor(onEvent ? eventKeyType(event, k) : attributeType(k), onEvent, k);
        if (!next.includes(cond.operator)) {
          cond.operator = next[0] || 'exists';
          cond.values = defaultValues(cond.operator);
        }
        redraw();
      }),
      el('span', { class: 'b-type meta' }, type),
      select('operator', ops, cond.operator, (op) => {
        if (baseOf(op) !== baseOf(cond.operator)) cond.values = defaultValues(op);
        cond.operator = op;
        redraw();
      }),
    );
    const editor = valueEditor(cond);
    if (editor) row.append(el('span', { class: 'b-values' }, editor));
    row.append(button('Remove', remove, 'small b-remove'));
    return row;
  };

  const groupBox = (group, remove, onEvent, event) => {
    if (!Array.isArray(group.children)) group.children = [];
    const box = el('div', { class: 'b-group', 'data-node': 'group' });
    const head = el('div', { class: 'b-head' },
      select('join', [{ value: 'and', label: 'all of (and)' }, { value: 'or', label: 'any of (or)' }], group.join || 'and', (j) => { group.join = j; changed(); }));
    const add = (make) => () => { group.children.push(make()); redraw(); };
    if (onEvent) {
      head.append(button('+ parameter condition', add(() => newCondition('event_condition'))), button('+ group', add(() => ({ type: 'group', join: 'and', children: [] }))));
    } else {
      head.append(button('+ condition', add(() => newCondition('attribute_condition'))), button('+ event', add(newEventGroup)),
        button('+ segment', add(newSegment)), button('+ group', add(() => ({ type: 'group', join: 'and', children: [] }))));
    }
    if (remove) head.append(button('Remove group', remove, 'small b-remove'));
    box.append(head);
    group.children.forEach((child, i) => box.append(nodeView(child, () => { group.children.splice(i, 1); redraw(); }, onEvent, event)));
    if (group.children.length === 0) box.append(el('p', { class: 'meta' }, '(empty: matches every contact)'));
    return box;
  };

  const eventBox = (node, remove) => {
    if (!Array.isArray(node.children)) node.children = [];
    const box = el('div', { class: 'b-group b-event', 'data-node': 'group_event' });
    const types = catalog.events.map((e) => e.type);
    box.append(el('div', { class: 'b-head' }, 'has an event ',
      select('event type', types, node.event, (t) => { node.event = t; redraw(); }),
      ' where ', select('join', [{ value: 'and', label: 'all of (and)' }, { value: 'or', label: 'any of (or)' }], node.join || 'and', (j) => { node.join = j; changed(); }),
      button('+ parameter condition', () => { node.children.push(newCondition('event_condition')); redraw(); }),
      button('Remove event', remove, 'small b-remove')));
    node.children.forEach((child, i) => box.append(nodeView(child, () => { node.children.splice(i, 1); redraw(); }, true, node.event)));
    return box;
  };

  const segmentRow = (node, remove) => el('div', { class: 'b-row', 'data-node': 'segment_condition' },
    select('in or not in', [{ value: 'in-segment', label: 'in segment' }, { value: 'in-segment-not', label: 'not in segment' }], node.operator, (o) => { node.operator = o; changed(); }),
    select('segment', catalog.segments, node.key, (k) => { node.key = k; changed(); }),
    button('Remove', remove, 'small b-remove'));

  const nodeView = (node, remove, onEvent, event) => {
    if (!node || typeof node !== 'object') return el('div', { class: 'b-row bad' }, 'not a node: ', JSON.stringify(node), button('Remove', remove, 'small b-remove'));
    switch (node.type) {
      case 'group': return groupBox(node, remove, onEvent, event);
      case 'group_event': return onEvent ? unknown(node, remove) : eventBox(node, remove);
      case 'attribute_condition': return conditionRow(node, false, undefined, remove);
      case 'event_condition': return onEvent ? conditionRow(node, true, event, remove) : unknown(node, remove);
      case 'segment_condition': return segmentRow(node, remove);
      default: return unknown(node, remove);
    }
  };
  const unknown = (node, remove) => el('div', { class: 'b-row' }, el('code', {}, JSON.stringify(node)), button('Remove', remove, 'small b-remove'));

  // ---- the two views and the count ----
  function redraw() {
    const view = model.root === undefined
      ? el('div', { class: 'b-group' }, el('p', { class: 'meta' }, 'No root: every contact matches. '), button('Start a filter', () => { model.root = { type: 'group', join: 'and', children: [] }; redraw(); }))
      : nodeView(model.root, () => { delete model.root; redraw(); }, false, undefined);
    tree.replaceChildren(view);
    changed();
  }

  let countTimer;
  let countRequest = 0;
  function changed() {
    json.value = JSON.stringify(model, null, 2);
    if (jsonError) jsonError.textContent = '';
    scheduleCount();
  }
  function scheduleCount() {
    clearTimeout(countTimer);
    countTimer = setTimeout(count, 400);
  }
  async function count() {
    if (!countOut || !form.dataset.countUrl) return;
    const mine = ++countRequest;
    countOut.textContent = 'Counting…';
    countOut.classList.remove('bad');
    const body = new URLSearchParams({ _csrf: form.querySelector('input[name=_csrf]').value, project: projectSelect ? projectSelect.value : '', filter: json.value });
    try {
      const res = await fetch(form.dataset.countUrl, { method: 'POST', body, credentials: 'same-origin', headers: { accept: 'application/json' } });
      const answer = await res.json();
      if (mine !== countRequest) return;
      if (res.ok) {
        countOut.textContent = `${answer.total} contact(s) match`;
        countOut.dataset.total = String(answer.total);
      } else {
        countOut.textContent = answer.detail || `refused (${res.status})`;
        countOut.classList.add('bad');
        delete countOut.dataset.total;
      }
    } catch {
      if (mine === countRequest) countOut.textContent = 'The count could not be fetched.';
    }
  }

  let jsonTimer;
  json.addEventListener('input', () => {
    clearTimeout(jsonTimer);
    jsonTimer = setTimeout(() => {
      let parsed;
      try {
        parsed = JSON.parse(json.value);
      } catch (e) {
        if (jsonError) jsonError.textContent = `Not valid JSON: ${e.message}`;
        return;
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
        if (jsonError) jsonError.textContent = 'The filter is a JSON object (spec 3 §2.3).';
        return;
      }
      model = parsed;
      const view = model.root === undefined ? null : nodeView(model.root, () => { delete model.root; redraw(); }, false, undefined);
      if (view) tree.replaceChildren(view);
      else redraw();
      if (jsonError) jsonError.textContent = '';
      scheduleCount();
    }, 300);
  });
  if (projectSelect) projectSelect.addEventListener('change', () => { window.location.assign(`${projectSelect.dataset.href}${encodeURIComponent(projectSelect.value)}`); });

  try {
    const parsed = JSON.parse(json.value);
    model = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : { version: '0.0.1' };
  } catch {
    model = { version: '0.0.1' };
    if (jsonError) jsonError.textContent = 'The filter text is not valid JSON: the builder starts empty.';
    tree.replaceChildren(el('p', { class: 'meta' }, 'Fix the JSON to edit it here.'));
    return;
  }
  // Draw without rewriting the text the server sent (a refused filter stays as typed).
  tree.replaceChildren(model.root === undefined ? el('div') : nodeView(model.root, () => { delete model.root; redraw(); }, false, undefined));
  if (model.root === undefined) redraw();
  else scheduleCount();
})();
