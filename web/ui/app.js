// paged web UI: the hash-routed silence views (#/silences,
// #/silences/new?filter={...}), in Alertmanager's link format. Plain
// JavaScript, no dependencies. The pure functions are exported as
// window.pagedUI so that tests can call exactly what the form calls.
(function () {
  'use strict';

  // parseFilter parses a matcher list such as {a="b",c=~"d",e!="f",g!~"h"}
  // (braces optional, values in "", '' or ``, names bare or quoted) into
  // [{name, value, isRegex, isEqual}]. It throws an Error that says where.
  function parseFilter(src) {
    var s = String(src == null ? '' : src);
    var i = 0;
    var out = [];
    function fail(msg) {
      throw new Error('cannot parse filter ' + s + ': ' + msg + ' at character ' + (i + 1));
    }
    function ws() {
      while (i < s.length && /\s/.test(s.charAt(i))) i++;
    }
    function hex(n) {
      var h = s.substr(i, n);
      if (h.length !== n || !/^[0-9a-fA-F]+$/.test(h)) fail('bad escape');
      i += n;
      return String.fromCodePoint(parseInt(h, 16));
    }
    function quoted() {
      var q = s.charAt(i);
      if (q !== '"' && q !== "'" && q !== '`') fail('expected a quoted value');
      i++;
      var v = '';
      while (i < s.length && s.charAt(i) !== q) {
        var c = s.charAt(i++);
        if (c !== '\\' || q === '`') {
          v += c;
          continue;
        }
        if (i >= s.length) break;
        var e = s.charAt(i++);
        switch (e) {
          case 'n': v += '\n'; break;
          case 't': v += '\t'; break;
          case 'r': v += '\r'; break;
          case 'a': v += '\x07'; break;
          case 'b': v += '\b'; break;
          case 'f': v += '\f'; break;
          case 'v': v += '\v'; break;
          case 'x': v += hex(2); break;
          case 'u': v += hex(4); break;
          case 'U': v += hex(8); break;
          default: v += e; // \" \' \\
        }
      }
      if (i >= s.length) fail('unterminated string');
      i++;
      return v;
    }
    function name() {
      var c = s.charAt(i);
      if (c === '"' || c === "'" || c === '`') return quoted();
      var m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(i));
      if (!m) fail('expected a label name');
      i += m[0].length;
      return m[0];
    }
    ws();
    if (i === s.length) return out;
    var braces = s.charAt(i) === '{';
    if (braces) i++;
    for (;;) {
      ws();
      if (braces && s.charAt(i) === '}') { i++; break; }
      if (!braces && i === s.length) break;
      var n = name();
      ws();
      var op = s.substr(i, 2);
      if (op !== '=~' && op !== '!=' && op !== '!~') {
        if (s.charAt(i) !== '=') fail('expected =, !=, =~ or !~');
        op = '=';
      }
      i += op.length;
      ws();
      var v = quoted();
      out.push({ name: n, value: v, isRegex: op.charAt(1) === '~', isEqual: op.charAt(0) === '=' });
      ws();
      if (s.charAt(i) === ',') { i++; continue; }
      if (braces && s.charAt(i) === '}') { i++; break; }
      if (!braces && i === s.length) break;
      fail(braces ? 'expected , or }' : 'expected ,');
    }
    ws();
    if (i < s.length) fail('unexpected text');
    return out;
  }

  // op returns a matcher's operator.
  function op(m) {
    if (m.isRegex) return m.isEqual ? '=~' : '!~';
    return m.isEqual ? '=' : '!=';
  }

  var units = { ms: 1, s: 1e3, m: 6e4, h: 36e5, d: 864e5, w: 6048e5, y: 31536e6 };

  // parseDuration parses a Prometheus duration (1h30m, 2d) into
  // milliseconds; NaN when it is not one.
  function parseDuration(s) {
    s = String(s == null ? '' : s).trim();
    if (!/^(\d+(ms|s|m|h|d|w|y))+$/.test(s)) return NaN;
    var total = 0;
    var re = /(\d+)(ms|s|m|h|d|w|y)/g;
    var m;
    while ((m = re.exec(s)) !== null) total += parseInt(m[1], 10) * units[m[2]];
    return total;
  }

  // buildSilence makes the body of POST /api/v2/silences (Alertmanager's
  // PostableSilence) from the form's values. Rows with neither name nor
  // value are ignored. It throws an Error with a message for the user.
  function buildSilence(matchers, f) {
    var ms = [];
    (matchers || []).forEach(function (m) {
      var name = String(m.name || '').trim();
      var value = String(m.value == null ? '' : m.value);
      if (name === '' && value === '') return;
      if (name === '') throw new Error('a matcher has a value but no label name');
      ms.push({ name: name, value: value, isRegex: !!m.isRegex, isEqual: m.isEqual !== false });
    });
    if (ms.length === 0) throw new Error('add at least one matcher');
    var ms2 = parseDuration(f.duration);
    if (!(ms2 > 0)) throw new Error('invalid duration "' + f.duration + '": use for example 30m, 2h or 1d');
    var createdBy = String(f.createdBy || '').trim();
    var comment = String(f.comment || '').trim();
    if (createdBy === '') throw new Error('say who creates the silence (Created by)');
    if (comment === '') throw new Error('say why in the comment');
    var start = f.startsAt instanceof Date ? f.startsAt : new Date();
    return {
      matchers: ms,
      startsAt: start.toISOString(),
      endsAt: new Date(start.getTime() + ms2).toISOString(),
      createdBy: createdBy,
      comment: comment
    };
  }

  function shellQuote(s) {
    return "'" + String(s).replace(/'/g, "'\\''") + "'";
  }

  // amtoolCommand is the same silence as an amtool command line.
  function amtoolCommand(url, matchers, f) {
    var args = ['amtool', '--alertmanager.url=' + shellQuote(url), 'silence', 'add',
      '--duration=' + shellQuote(f.duration || '2h'),
      '--author=' + (f.createdBy ? shellQuote(f.createdBy) : '"$USER"'),
      '--comment=' + shellQuote(f.comment || 'why this is silenced')];
    (matchers || []).forEach(function (m) {
      if (m.name) args.push(shellQuote(m.name + op(m) + JSON.stringify(String(m.value))));
    });
    return args.join(' ');
  }

  var api = {
    parseFilter: parseFilter,
    parseDuration: parseDuration,
    buildSilence: buildSilence,
    amtoolCommand: amtoolCommand,
    op: op
  };
  window.pagedUI = api;

  // ---- the page ----
  var root = document.getElementById('paged-ui');
  if (!root) return;
  function $(id) { return document.getElementById(id); }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text != null) e.textContent = text;
    return e;
  }

  function authHeaders(h) {
    var t = $('token');
    if (t && t.value.trim() !== '') h.Authorization = 'Bearer ' + t.value.trim();
    return h;
  }

  function errorText(resp) {
    return resp.text().then(function (t) {
      var msg = t;
      try {
        var j = JSON.parse(t);
        msg = (j && (j.error || j.message)) || t;
      } catch (e) { /* plain text */ }
      return resp.status + ' ' + resp.statusText + ': ' + String(msg).trim();
    });
  }

  // Matcher rows. Values are set as attributes so that they show in the
  // serialized DOM, and the row is the form's state.
  function addRow(m) {
    var tr = el('tr', { 'class': 'matcher', 'data-matcher': '' });
    var name = el('input', { type: 'text', 'class': 'm-name', 'aria-label': 'label name', value: m.name || '' });
    var sel = el('select', { 'class': 'm-op', 'aria-label': 'match type' });
    ['=', '!=', '=~', '!~'].forEach(function (o) {
      var opt = el('option', { value: o }, o);
      if (o === op(m)) opt.setAttribute('selected', '');
      sel.appendChild(opt);
    });
    var value = el('input', { type: 'text', 'class': 'm-value', 'aria-label': 'value', value: m.value || '' });
    var del = el('button', { type: 'button', 'class': 'm-remove', title: 'remove this matcher' }, '✕');
    del.addEventListener('click', function () { tr.remove(); updateAmtool(); });
    [name, sel, value].forEach(function (x) { x.addEventListener('input', updateAmtool); });
    [name, sel, value, del].forEach(function (x) { var td = el('td'); td.appendChild(x); tr.appendChild(td); });
    $('matcher-rows').appendChild(tr);
  }

  function formMatchers() {
    var out = [];
    document.querySelectorAll('#matcher-rows tr.matcher').forEach(function (tr) {
      var o = tr.querySelector('.m-op').value;
      out.push({
        name: tr.querySelector('.m-name').value,
        value: tr.querySelector('.m-value').value,
        isRegex: o.charAt(1) === '~',
        isEqual: o.charAt(0) === '='
      });
    });
    return out;
  }

  function formFields() {
    return { duration: $('duration').value, createdBy: $('created-by').value, comment: $('comment').value };
  }

  function updateAmtool() {
    var pre = $('silence-amtool');
    pre.textContent = amtoolCommand(pre.getAttribute('data-url'), formMatchers(), formFields());
  }

  function showForm(filter) {
    $('matcher-rows').textContent = '';
    $('filter-error').textContent = '';
    $('silence-result').textContent = '';
    var ms = [];
    try {
      ms = parseFilter(filter);
    } catch (e) {
      $('filter-error').textContent = e.message;
    }
    if (ms.length === 0) ms = [{ name: '', value: '', isRegex: false, isEqual: true }];
    ms.forEach(addRow);
    updateAmtool();
  }

  function submitForm(ev) {
    ev.preventDefault();
    var out = $('silence-result');
    out.className = '';
    var body;
    try {
      body = buildSilence(formMatchers(), formFields());
    } catch (e) {
      out.className = 'err';
      out.textContent = e.message;
      return;
    }
    out.textContent = 'Creating…';
    fetch('api/v2/silences', {
      method: 'POST',
      headers: authHeaders({ 'Content-Type': 'application/json', Accept: 'application/json' }),
      body: JSON.stringify(body)
    }).then(function (resp) {
      if (!resp.ok) return errorText(resp).then(function (t) { throw new Error(t); });
      return resp.json();
    }).then(function (j) {
      out.className = 'ok';
      out.textContent = 'Silence ' + j.silenceID + ' created. ';
      out.appendChild(el('a', { href: '#/silences' }, 'All silences'));
    }).catch(function (e) {
      out.className = 'err';
      out.textContent = 'Not created: ' + e.message;
    });
  }

  function matcherText(ms) {
    return '{' + (ms || []).map(function (m) {
      return m.name + op({ isRegex: m.isRegex, isEqual: m.isEqual !== false }) + JSON.stringify(m.value);
    }).join(',') + '}';
  }

  function fmtTime(s) {
    var d = new Date(s);
    return isNaN(d.getTime()) ? String(s) : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  }

  var stateOrder = { active: 0, pending: 1, expired: 2 };

  function showList() {
    var status = $('silences-status');
    var tbody = document.querySelector('#silence-list tbody');
    status.className = '';
    status.textContent = 'Loading…';
    fetch('api/v2/silences', { headers: { Accept: 'application/json' } }).then(function (resp) {
      if (!resp.ok) return errorText(resp).then(function (t) { throw new Error(t); });
      return resp.json();
    }).then(function (list) {
      var showExpired = $('show-expired').checked;
      list = (list || []).filter(function (s) { return showExpired || s.status.state !== 'expired'; });
      list.sort(function (a, b) {
        return (stateOrder[a.status.state] - stateOrder[b.status.state]) || (new Date(a.endsAt) - new Date(b.endsAt));
      });
      tbody.textContent = '';
      list.forEach(function (s) {
        var tr = el('tr', { 'class': 'silence-row', 'data-id': s.id });
        var st = el('td');
        st.appendChild(el('span', { 'class': 'badge' }, s.status.state));
        tr.appendChild(st);
        tr.appendChild(el('td', { 'class': 'mono' }, matcherText(s.matchers)));
        tr.appendChild(el('td', {}, fmtTime(s.startsAt)));
        tr.appendChild(el('td', {}, fmtTime(s.endsAt)));
        tr.appendChild(el('td', {}, s.createdBy));
        tr.appendChild(el('td', {}, s.comment));
        tr.appendChild(el('td', { 'class': 'mono' }, s.id));
        var act = el('td');
        if (s.status.state !== 'expired') {
          var b = el('button', { type: 'button', 'class': 'expire' }, 'Expire');
          b.addEventListener('click', function () { expire(s.id); });
          act.appendChild(b);
        }
        tr.appendChild(act);
        tbody.appendChild(tr);
      });
      status.textContent = list.length === 0 ? 'No silence.' : '';
    }).catch(function (e) {
      status.className = 'err';
      status.textContent = 'Cannot list silences: ' + e.message;
    });
  }

  function expire(id) {
    var status = $('silences-status');
    fetch('api/v2/silence/' + encodeURIComponent(id), { method: 'DELETE', headers: authHeaders({}) }).then(function (resp) {
      if (!resp.ok) return errorText(resp).then(function (t) { throw new Error(t); });
      showList();
    }).catch(function (e) {
      status.className = 'err';
      status.textContent = 'Cannot expire ' + id + ': ' + e.message;
    });
  }

  function route() {
    var h = location.hash.replace(/^#/, '');
    var q = h.indexOf('?');
    var path = q >= 0 ? h.slice(0, q) : h;
    var params = new URLSearchParams(q >= 0 ? h.slice(q + 1) : '');
    var view = 'overview';
    if (path === '/silences/new') view = 'new';
    else if (path === '/silences' || path.indexOf('/silences/') === 0) view = 'list';
    $('view-overview').hidden = view !== 'overview';
    $('view-silences').hidden = view !== 'list';
    $('view-silence-new').hidden = view !== 'new';
    $('silence-auth').hidden = view === 'overview';
    if (view === 'new') showForm(params.get('filter'));
    if (view === 'list') showList();
  }

  $('silence-form').addEventListener('submit', submitForm);
  $('add-matcher').addEventListener('click', function () { addRow({ name: '', value: '', isRegex: false, isEqual: true }); });
  ['duration', 'created-by', 'comment'].forEach(function (id) { $(id).addEventListener('input', updateAmtool); });
  $('show-expired').addEventListener('change', showList);
  window.addEventListener('hashchange', route);
  route();
})();
