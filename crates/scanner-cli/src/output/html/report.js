// The script of `--format html` (see output/html.rs). It reads the embedded findings, draws
// the summary, and shows one page of the filtered, sorted table at a time. Every string of the
// report goes into the page through textContent, never as markup.
(function () {
  'use strict';
  var started = performance.now();
  var data = JSON.parse(document.getElementById('findings').textContent);
  var PAGE = 100;
  var RANK = { high: 0, medium: 1, low: 2 };
  // A finding's `validation.status` (`valid`, `invalid`, `unknown`...); one without is
  // `not_checked`. The validity column shows only when some finding was checked.
  var NOT_CHECKED = 'not_checked';
  var hasCommit = data.some(function (f) { return f.commit; });
  var hasValidity = data.some(function (f) { return validity(f) !== NOT_CHECKED; });
  var $ = function (id) { return document.getElementById(id); };

  function validity(f) {
    return f.validation && f.validation.status != null ? String(f.validation.status) : NOT_CHECKED;
  }
  // Control characters and bidirectional controls shown as escapes, as `--format text` does:
  // a finding must not reorder or hide what the reader sees. `keepNewlines` for context.
  var UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\t/g;
  function clean(s) {
    return String(s).replace(UNSAFE, function (c) {
      if (c === '\t') return '    ';
      return '\\u{' + c.charCodeAt(0).toString(16) + '}';
    }).replace(/\n/g, '\\n');
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }
  function place(f) { return f.path + ':' + f.line + ':' + f.column; }
  function shortCommit(c) { return c ? c.id.slice(0, 12) : ''; }
  function plural(n, one, many) { return n.toLocaleString('en-US') + ' ' + (n === 1 ? one : many); }

  // Searchable text of each finding, built on first use.
  var haystacks = new Array(data.length);
  function haystack(i) {
    if (haystacks[i] === undefined) {
      var f = data[i];
      var parts = [f.path, f.rule_id, f.rule_name, f.secret, f.match, f.confidence, f.tags.join(' '),
        f.decoded.join(' '), validity(f)];
      if (f.commit) parts.push(f.commit.id, f.commit.author_name, f.commit.author_email, f.commit.summary);
      haystacks[i] = parts.join('\n').toLowerCase();
    }
    return haystacks[i];
  }

  // ---- State, kept in the URL fragment so a link reopens the same view. ----
  var state;
  function readHash() {
    var p = new URLSearchParams(window.location.hash.slice(1));
    state = {
      filter: p.get('filter') || '',
      confidence: p.get('confidence') || '',
      rule: p.get('rule') || '',
      validity: p.get('validity') || '',
      sort: p.get('sort') || 'location',
      desc: p.get('desc') === '1',
      page: Math.max(1, parseInt(p.get('page'), 10) || 1),
      open: new Set((p.get('open') || '').split(',').filter(function (s) { return s !== ''; }).map(Number))
    };
  }
  function writeHash() {
    var p = new URLSearchParams();
    ['filter', 'confidence', 'rule', 'validity'].forEach(function (k) { if (state[k]) p.set(k, state[k]); });
    if (state.sort !== 'location') p.set('sort', state.sort);
    if (state.desc) p.set('desc', '1');
    if (state.page > 1) p.set('page', String(state.page));
    if (state.open.size) p.set('open', Array.from(state.open).join(','));
    var hash = p.toString();
    try { history.replaceState(null, '', hash ? '#' + hash : window.location.pathname); } catch (e) { /* file: URL quirks */ }
  }

  // ---- Columns: header, cell and sort key. Ties keep report order (path, line, column). ----
  var columns = [
    { key: 'confidence', title: 'Confidence', sortKey: function (f) { return RANK[f.confidence]; },
      cell: function (f) { var td = el('td'); td.appendChild(el('span', 'badge ' + f.confidence, f.confidence)); td.title = f.tags.join(', '); return td; } },
    { key: 'rule', title: 'Rule', sortKey: function (f) { return f.rule_id; },
      cell: function (f) { var td = el('td', 'mono', clean(f.rule_id)); td.title = f.rule_name; return td; } },
    { key: 'location', title: 'Location', sortKey: null,
      cell: function (f) { return el('td', 'mono loc', clean(place(f))); } },
    { key: 'secret', title: 'Secret', sortKey: function (f) { return f.secret; },
      cell: function (f) { return el('td', 'mono', clean(f.secret)); } }
  ];
  if (hasCommit) {
    columns.push({ key: 'commit', title: 'Commit', sortKey: function (f) { return f.commit ? f.commit.author_date : ''; },
      cell: function (f) {
        if (!f.commit) return el('td', 'muted', '');
        var td = el('td');
        td.appendChild(el('span', 'mono', shortCommit(f.commit)));
        td.appendChild(document.createTextNode(' ' + f.commit.author_date.slice(0, 10) + ' ' + clean(f.commit.author_name)));
        return td;
      } });
  }
  if (hasValidity) {
    columns.push({ key: 'validity', title: 'Validity', sortKey: validity,
      cell: function (f) { return el('td', validity(f) === NOT_CHECKED ? 'muted' : '', clean(validity(f))); } });
  }
  function column(key) {
    for (var i = 0; i < columns.length; i++) if (columns[i].key === key) return columns[i];
    return columns[2];
  }

  // ---- Summary, drawn once. ----
  function counts(keyOf) {
    var m = new Map();
    data.forEach(function (f) { var k = keyOf(f); m.set(k, (m.get(k) || 0) + 1); });
    return m;
  }
  function pickButton(label, onPick) {
    var b = el('button', 'pick', label);
    b.type = 'button';
    b.addEventListener('click', onPick);
    return b;
  }
  function drawSummary() {
    // By path_bytes too: names that differ only in bytes that are not UTF-8 share `path`.
    var files = new Set(data.map(function (f) { return JSON.stringify([f.commit ? f.commit.id : '', f.path, f.path_bytes]); }));
    var commits = new Set(data.filter(function (f) { return f.commit; }).map(function (f) { return f.commit.id; }));
    $('totals').textContent = plural(data.length, 'finding', 'findings') + ' in ' + plural(files.size, 'file', 'files') +
      (hasCommit ? ' of ' + plural(commits.size, 'commit', 'commits') : '');
    var conf = counts(function (f) { return f.confidence; });
    ['high', 'medium', 'low'].forEach(function (c) {
      var li = el('li');
      li.appendChild(el('span', 'badge ' + c, c));
      li.appendChild(document.createTextNode(' '));
      li.appendChild(pickButton(String(conf.get(c) || 0), function () { setFilter({ confidence: c }); }));
      $('by-confidence').appendChild(li);
      var o = el('option', null, c + ' (' + (conf.get(c) || 0) + ')');
      o.value = c;
      $('confidence').appendChild(o);
    });
    var val = counts(validity);
    if (!hasValidity) {
      $('by-validity').appendChild(el('li', 'muted', 'not checked'));
    } else {
      $('validity').hidden = false;
      Array.from(val.keys()).sort().forEach(function (v) {
        var li = el('li', null, clean(v) + ': ');
        li.appendChild(pickButton(String(val.get(v)), function () { setFilter({ validity: v }); }));
        $('by-validity').appendChild(li);
        var o = el('option', null, clean(v) + ' (' + val.get(v) + ')');
        o.value = v;
        $('validity').appendChild(o);
      });
    }
    var rules = counts(function (f) { return f.rule_id; });
    var names = new Map(data.map(function (f) { return [f.rule_id, f.rule_name]; }));
    var body = $('by-rule').tBodies[0];
    Array.from(rules.keys()).sort(function (a, b) { return rules.get(b) - rules.get(a) || (a < b ? -1 : 1); })
      .forEach(function (r) {
        var tr = el('tr');
        var td = el('td', 'mono');
        td.appendChild(pickButton(clean(r), function () { setFilter({ rule: r }); }));
        tr.appendChild(td);
        tr.appendChild(el('td', 'muted', clean(names.get(r))));
        tr.appendChild(el('td', 'n', String(rules.get(r))));
        body.appendChild(tr);
      });
    Array.from(rules.keys()).sort().forEach(function (r) {
      var o = el('option', null, clean(r) + ' (' + rules.get(r) + ')');
      o.value = r;
      $('rule').appendChild(o);
    });
  }

  // ---- The table. ----
  function matching() {
    var q = state.filter.toLowerCase();
    var out = [];
    for (var i = 0; i < data.length; i++) {
      var f = data[i];
      if (state.confidence && f.confidence !== state.confidence) continue;
      if (state.rule && f.rule_id !== state.rule) continue;
      if (state.validity && validity(f) !== state.validity) continue;
      if (q && haystack(i).indexOf(q) < 0) continue;
      out.push(i);
    }
    var key = column(state.sort).sortKey;
    if (key) {
      out.sort(function (a, b) {
        var x = key(data[a]), y = key(data[b]);
        return x < y ? -1 : x > y ? 1 : a - b;
      });
    }
    if (state.desc) out.reverse();
    return out;
  }

  function drawHead() {
    var head = $('head');
    head.textContent = '';
    columns.forEach(function (c) {
      var th = el('th', c.key === 'location' ? null : 'fit', c.title);
      th.dataset.key = c.key;
      th.setAttribute('aria-sort', state.sort === c.key ? (state.desc ? 'descending' : 'ascending') : 'none');
      if (state.sort === c.key) th.appendChild(el('span', 'arrow', state.desc ? ' ▼' : ' ▲'));
      th.addEventListener('click', function () {
        if (state.sort === c.key) state.desc = !state.desc; else { state.sort = c.key; state.desc = false; }
        state.page = 1;
        render();
      });
      head.appendChild(th);
    });
  }

  function fact(dl, term, value, cls) {
    dl.appendChild(el('dt', null, term));
    dl.appendChild(el('dd', cls || null, value));
  }

  function contextBlock(f) {
    var c = f.context;
    if (!c) {
      return el('p', 'muted', f.commit
        ? 'Lines of context: not available; git show ' + f.commit.id.slice(0, 12) + ':' + clean(f.path) + ' prints the file.'
        : 'Lines of context: not available (not a file read again as it was scanned).');
    }
    var pre = el('pre', 'ctx');
    var before = c.before.split('\n');
    var after = c.after.split('\n');
    function line(number, parts, hit) {
      var row = el('span', hit ? 'l hit' : 'l');
      row.appendChild(el('span', 'n', number));
      parts.forEach(function (p) { row.appendChild(p); });
      pre.appendChild(row);
    }
    for (var i = 0; i < before.length - 1; i++) {
      line(String(c.line + i), [document.createTextNode(clean(before[i]))], false);
    }
    var label = f.end_line > f.line ? f.line + '–' + f.end_line : String(f.line);
    line(label, [document.createTextNode(clean(before[before.length - 1])), el('mark', null, clean(c.secret)),
      document.createTextNode(clean(after[0]))], true);
    for (var j = 1; j < after.length; j++) {
      line(String(f.end_line + j), [document.createTextNode(clean(after[j]))], false);
    }
    return pre;
  }

  function detailRow(f) {
    var tr = el('tr', 'detail');
    var td = el('td');
    td.colSpan = columns.length;
    var dl = el('dl', 'facts');
    fact(dl, 'Rule', clean(f.rule_name + ' (' + f.rule_id + ')'));
    fact(dl, 'Confidence', f.confidence + (f.tags.length ? ': ' + f.tags.join(', ') : ''));
    fact(dl, 'Match', clean(f.match), 'mono');
    fact(dl, 'Fingerprint', f.fingerprint, 'mono');
    fact(dl, 'Entropy', f.entropy.toFixed(2) + ' bits per byte');
    if (f.decoded.length) fact(dl, 'Found in', f.decoded.join(' in ') + ' (the position is that of the encoded run)');
    if (f.commit) {
      fact(dl, 'Commit', f.commit.id, 'mono');
      fact(dl, 'Author', clean(f.commit.author_name + ' <' + f.commit.author_email + '>'));
      fact(dl, 'Date', f.commit.author_date);
      fact(dl, 'Subject', clean(f.commit.summary));
    }
    if (hasValidity) {
      fact(dl, 'Validity', clean(validity(f)));
      // The other fields as given: `reason`, and each of an object's (`identity`) by name.
      var fields = f.validation || {};
      Object.keys(fields).forEach(function (k) {
        var v = fields[k];
        if (k === 'status' || v == null) return;
        if (typeof v !== 'object') { fact(dl, k, clean(String(v))); return; }
        Object.keys(v).forEach(function (name) {
          if (v[name] != null && typeof v[name] !== 'object') fact(dl, k + ': ' + name, clean(String(v[name])));
        });
      });
    }
    td.appendChild(dl);
    td.appendChild(contextBlock(f));
    tr.appendChild(td);
    return tr;
  }

  function render() {
    var rows = matching();
    var pages = Math.max(1, Math.ceil(rows.length / PAGE));
    if (state.page > pages) state.page = pages;
    var first = (state.page - 1) * PAGE;
    var shown = rows.slice(first, first + PAGE);
    var body = $('rows');
    var fresh = document.createDocumentFragment();
    shown.forEach(function (i) {
      var f = data[i];
      var tr = el('tr', state.open.has(i) ? 'finding open' : 'finding');
      tr.dataset.index = String(i);
      tr.tabIndex = 0;
      columns.forEach(function (c) {
        var td = c.cell(f);
        if (c.key !== 'location') td.classList.add('fit');
        tr.appendChild(td);
      });
      fresh.appendChild(tr);
      if (state.open.has(i)) fresh.appendChild(detailRow(f));
    });
    body.textContent = '';
    body.appendChild(fresh);
    var table = $('table');
    table.dataset.total = String(data.length);
    table.dataset.matching = String(rows.length);
    table.dataset.shown = String(shown.length);
    $('count').textContent = rows.length === data.length
      ? plural(data.length, 'finding', 'findings')
      : rows.length.toLocaleString('en-US') + ' of ' + plural(data.length, 'finding', 'findings');
    $('page').textContent = rows.length
      ? 'Page ' + state.page + ' of ' + pages + ' (' + (first + 1) + '–' + (first + shown.length) + ')'
      : 'No finding matches';
    $('prev').disabled = state.page <= 1;
    $('next').disabled = state.page >= pages;
    $('filter').value = state.filter;
    $('confidence').value = state.confidence;
    $('rule').value = state.rule;
    $('validity').value = state.validity;
    drawHead();
    writeHash();
  }

  function setFilter(change) {
    Object.keys(change).forEach(function (k) { state[k] = change[k]; });
    state.page = 1;
    render();
  }

  // ---- Events. ----
  var typing = 0;
  $('filter').addEventListener('input', function () {
    clearTimeout(typing);
    var v = this.value;
    typing = setTimeout(function () { setFilter({ filter: v }); }, 120);
  });
  ['confidence', 'rule', 'validity'].forEach(function (id) {
    $(id).addEventListener('change', function () { var c = {}; c[id] = this.value; setFilter(c); });
  });
  $('clear').addEventListener('click', function () { setFilter({ filter: '', confidence: '', rule: '', validity: '' }); });
  $('prev').addEventListener('click', function () { state.page--; render(); });
  $('next').addEventListener('click', function () { state.page++; render(); });
  function toggle(tr) {
    var i = Number(tr.dataset.index);
    if (state.open.has(i)) state.open.delete(i); else state.open.add(i);
    render();
  }
  $('rows').addEventListener('click', function (e) {
    var tr = e.target.closest('tr.finding');
    if (tr && !window.getSelection().toString()) toggle(tr);
  });
  $('rows').addEventListener('keydown', function (e) {
    var tr = e.target.closest('tr.finding');
    if (tr && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); toggle(tr); }
  });
  window.addEventListener('hashchange', function () { readHash(); render(); });

  readHash();
  drawSummary();
  render();
  document.body.dataset.renderMs = String(Math.round(performance.now() - started));
  document.body.dataset.ready = '1';
})();
