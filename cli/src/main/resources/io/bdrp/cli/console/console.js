// The bdrp console's page: reads /api/federation every second and draws the federation with
// Cytoscape.js: routers as nodes (grey when they do not answer), links as edges (red and dashed
// when down, else coloured by their busier direction's bytes per second against the chosen
// scale, labelled with their DATA transport). Selecting a router shows its panel.
// The trace form asks the console server (POST api/trace) to trace a message from the chosen
// router and draws the result on the graph: the ingress, every copy with its direction, the
// destinations with their matching hosts, false positives, drops and routers that did not report;
// the side panel lists the same as text. window.bdrpConsole is the page's interface for tests and
// overlays (highlight() marks a set of routers and links; traceShown() reads the drawn trace).
(function () {
  'use strict';
  const POLL_MS = 1000;
  const cy = cytoscape({
    container: document.getElementById('graph'),
    wheelSensitivity: 0.3,
    style: [
      { selector: 'node', style: {
          'label': 'data(label)', 'text-valign': 'center', 'color': '#fff', 'font-size': 13,
          'background-color': '#1565c0', 'width': 44, 'height': 44,
          'border-width': 2, 'border-color': '#0d47a1' } },
      { selector: 'node.silent', style: { 'background-color': '#bdbdbd', 'border-color': '#9e9e9e', 'color': '#555' } },
      { selector: 'node:selected', style: { 'border-width': 5, 'border-color': '#ffab00' } },
      { selector: 'edge', style: {
          'width': 'data(width)', 'line-color': 'data(color)', 'curve-style': 'bezier',
          'label': 'data(label)', 'font-size': 10, 'color': '#37474f',
          'text-background-color': '#fafafa', 'text-background-opacity': 0.85, 'text-background-padding': 2 } },
      { selector: 'edge[transport = "udp"]', style: { 'line-style': 'dotted' } },
      { selector: 'edge[transport = "shm"], edge[transport = "rdma"]', style: { 'line-style': 'dashed', 'line-dash-pattern': [12, 3] } },
      { selector: 'edge.down', style: { 'line-color': '#d50000', 'line-style': 'dashed', 'width': 4, 'color': '#d50000' } },
      { selector: '.highlight', style: { 'overlay-color': '#ff6d00', 'overlay-opacity': 0.35, 'overlay-padding': 6 } },
      // A trace drawn on the graph (after the live styles, which it overrides).
      { selector: '.trace-faded', style: { 'opacity': 0.3 } },
      { selector: 'node.trace-node', style: {
          'label': 'data(traceLabel)', 'text-wrap': 'wrap', 'text-valign': 'bottom', 'text-margin-y': 4,
          'color': '#111', 'font-weight': 'bold', 'text-outline-color': '#fff', 'text-outline-width': 2 } },
      { selector: 'node.trace-transit', style: { 'background-color': '#64b5f6', 'border-color': '#1e88e5' } },
      { selector: 'node.trace-dest', style: { 'background-color': '#2e7d32', 'border-color': '#1b5e20' } },
      { selector: 'node.trace-fp', style: { 'background-color': '#8e24aa', 'border-color': '#4a148c', 'border-style': 'dashed', 'border-width': 4 } },
      { selector: 'node.trace-missing, node.trace-unreached', style: { 'background-color': '#212121', 'border-color': '#d50000', 'border-style': 'dashed', 'border-width': 4 } },
      { selector: 'node.trace-drop', style: { 'border-color': '#d50000', 'border-width': 6, 'border-style': 'solid' } },
      { selector: 'node.trace-ingress', style: { 'shape': 'diamond', 'width': 56, 'height': 56, 'background-color': '#00897b', 'border-color': '#004d40' } },
      { selector: 'edge.trace-copy', style: { 'line-color': '#00c853', 'width': 6, 'line-style': 'solid', 'arrow-scale': 1.4,
          'target-arrow-color': '#00c853', 'source-arrow-color': '#00c853', 'z-index': 10 } },
      { selector: 'edge.trace-unsent', style: { 'line-color': '#d50000', 'width': 5, 'line-style': 'dashed', 'arrow-scale': 1.4,
          'target-arrow-color': '#d50000', 'source-arrow-color': '#d50000', 'z-index': 10 } },
      { selector: 'edge.trace-fwd', style: { 'target-arrow-shape': 'triangle' } },
      { selector: 'edge.trace-rev', style: { 'source-arrow-shape': 'triangle' } },
    ],
  });

  let last = null;          // the last picture read
  let lastOk = 0;           // when it was read
  let selected = null;      // the router number whose panel is shown
  let layoutKey = '';       // the set of nodes and edges the layout was run for
  const scaleSelect = document.getElementById('scale');

  function edgeId(a, b) { return a < b ? a + '-' + b : b + '-' + a; }

  function utilColor(ratio) {
    if (ratio <= 0.001) return '#90a4ae';
    const stops = [[0, [251, 192, 45]], [1, [230, 81, 0]]];
    const t = Math.min(1, ratio);
    const c = stops[0][1].map((v, i) => Math.round(v + (stops[1][1][i] - v) * t));
    return 'rgb(' + c.join(',') + ')';
  }

  function rate(bytes) {
    if (bytes >= 1e6) return (bytes / 1e6).toFixed(1) + ' MB/s';
    if (bytes >= 1e3) return (bytes / 1e3).toFixed(1) + ' kB/s';
    return bytes + ' B/s';
  }

  // Nodes and edges from the picture: every router named anywhere is a node; a link is down if
  // either answering end says so, and its rate is the larger of both ends' sending rates.
  function model(pic) {
    const nodes = new Map();
    const edges = new Map();
    for (const r of pic.routers) {
      if (r.router === null) continue;
      nodes.set(r.router, { router: r.router, answering: r.answering, entry: r });
    }
    for (const r of pic.routers) {
      if (r.router === null) continue;
      for (const l of r.links || []) {
        if (!nodes.has(l.router)) nodes.set(l.router, { router: l.router, answering: false, entry: null });
        const id = edgeId(r.router, l.router);
        const e = edges.get(id) || { id, a: Math.min(r.router, l.router), b: Math.max(r.router, l.router),
                                     up: true, reported: false, bytes: 0, transport: l.transport, ends: {} };
        if (r.answering) {
          e.reported = true;
          e.up = e.up && l.state === 'up';
          e.bytes = Math.max(e.bytes, l.rates ? l.rates.bytesOut : 0);
          e.transport = l.dataTransport || l.transport;
        }
        e.ends[r.router] = l;
        edges.set(id, e);
      }
    }
    for (const e of edges.values()) {
      if (!e.reported || !nodes.get(e.a).answering || !nodes.get(e.b).answering) {
        // An end that does not answer: what the other end says is all there is.
        if (!e.reported) e.up = false;
      }
    }
    return { nodes, edges };
  }

  function draw(pic) {
    const m = model(pic);
    const scale = Number(scaleSelect.value);
    cy.batch(() => {
      for (const n of m.nodes.values()) {
        const id = 'r' + n.router;
        let el = cy.getElementById(id);
        if (el.empty()) el = cy.add({ group: 'nodes', data: { id, router: n.router, label: String(n.router) } });
        el.toggleClass('silent', !n.answering);
        el.data('answering', n.answering);
      }
      for (const e of m.edges.values()) {
        const id = 'l' + e.id;
        let el = cy.getElementById(id);
        if (el.empty()) el = cy.add({ group: 'edges', data: { id, source: 'r' + e.a, target: 'r' + e.b } });
        const ratio = e.bytes / scale;
        el.data({
          state: e.up ? 'up' : 'down', transport: e.transport, bytesPerSecond: e.bytes,
          color: utilColor(ratio), width: 2 + 6 * Math.min(1, ratio),
          label: e.up ? (e.transport + (e.bytes > 0 ? ' ' + rate(e.bytes) : '')) : 'down',
        });
        el.toggleClass('down', !e.up);
      }
    });
    const key = cy.nodes().map(n => n.id()).sort().join(',') + '|' + cy.edges().map(e => e.id()).sort().join(',');
    if (key !== layoutKey) {
      layoutKey = key;
      cy.layout({ name: 'cose', animate: false, randomize: false, nodeRepulsion: () => 400000, idealEdgeLength: () => 90 }).run();
      cy.fit(undefined, 30);
    }
    routerList();
    if (selected !== null) panel(pic, selected);
  }

  // The trace form's list of routers: every router of the graph, in order, the choice kept.
  const traceRouter = document.getElementById('trace-router');
  function routerList() {
    const ns = cy.nodes().map(n => n.data('router')).sort((a, b) => a - b);
    if (ns.join(',') === Array.from(traceRouter.options).map(o => o.value).join(',')) return;
    const keep = traceRouter.value;
    traceRouter.innerHTML = ns.map(n => '<option value="' + n + '">' + n + '</option>').join('');
    if (ns.includes(Number(keep)) && keep !== '') traceRouter.value = keep;
  }

  function esc(s) {
    return String(s === null || s === undefined ? '—' : s)
      .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  }

  function panel(pic, n) {
    const el = document.getElementById('panel');
    const r = pic.routers.find(x => x.router === n);
    if (!r) {
      el.innerHTML = '<h2>Router ' + n + '</h2><p class="hint">No admin address is known for it: '
        + 'its neighbours name it, but none of them is configured with its admin address.</p>';
      return;
    }
    let h = '<h2 id="panel-router" data-router="' + n + '">Router ' + n + '</h2>';
    h += '<p>' + esc(r.admin) + (r.answering ? '' : ' — <span class="down">not answering</span> ' + esc(r.error)) + '</p>';
    if (!r.answering) {
      h += '<p class="hint">' + (r.info ? 'What follows is what it said last.' : 'It has not answered yet.') + '</p>';
    }
    const info = r.info || {};
    let dIn = 0, dOut = 0, bIn = 0, bOut = 0;
    for (const l of r.links) { if (l.rates) { dIn += l.rates.dataIn; dOut += l.rates.dataOut; bIn += l.rates.bytesIn; bOut += l.rates.bytesOut; } }
    h += '<h3>Rates (last second)</h3><table><tr><th></th><th class="n">in</th><th class="n">out</th></tr>'
      + '<tr><td>DATA frames/s</td><td class="n">' + dIn + '</td><td class="n">' + dOut + '</td></tr>'
      + '<tr><td>link bytes</td><td class="n">' + rate(bIn) + '</td><td class="n">' + rate(bOut) + '</td></tr></table>';
    h += '<p>epoch ' + esc(info.epoch) + ', version ' + esc(info.version) + ', routes ' + esc(info.routes)
      + ', predicates held ' + esc(info.predicateOrigins) + ', fast path ' + esc(info.fastPath && info.fastPath.configured) + '</p>';
    h += '<h3>Links</h3><table id="panel-links"><tr><th>to</th><th>state</th><th>transport</th><th class="n">out/s</th>'
      + '<th class="n">in/s</th><th class="n">drops down</th><th class="n">high water</th><th class="n">transport full</th></tr>';
    for (const l of r.links) {
      const d = l.drops || {};
      h += '<tr><td>' + l.router + '</td><td class="' + (l.state === 'up' ? '' : 'down') + '">' + esc(l.state) + '</td><td>'
        + esc(l.dataTransport || l.transport) + '</td><td class="n">' + rate(l.rates ? l.rates.bytesOut : 0) + '</td><td class="n">'
        + rate(l.rates ? l.rates.bytesIn : 0) + '</td><td class="n">' + esc(d.down) + '</td><td class="n">' + esc(d.highWater)
        + '</td><td class="n">' + esc(d.transportFull) + '</td></tr>';
    }
    h += '</table>';
    const hosts = r.hosts || { count: 0, hosts: [] };
    const byProto = {};
    for (const x of hosts.hosts) byProto[x.protocol] = (byProto[x.protocol] || 0) + 1;
    h += '<h3>Hosts: <span id="panel-host-count">' + hosts.count + '</span> ('
      + Object.entries(byProto).map(([p, c]) => c + ' ' + p).join(', ') + ')</h3>';
    h += '<table id="panel-hosts"><tr><th>id</th><th>name</th><th>protocol</th><th>user</th><th class="n">filters</th>'
      + '<th class="n">pub/s</th><th class="n">deliv/s</th><th class="n">dropped</th></tr>';
    for (const x of hosts.hosts) {
      h += '<tr class="host"><td>' + x.id + '</td><td class="host-name">' + esc(x.name) + '</td><td>' + esc(x.protocol) + '</td><td>'
        + esc(x.user) + '</td><td class="n">' + x.filters + '</td><td class="n">' + (x.rates ? x.rates.published : '—')
        + '</td><td class="n">' + (x.rates ? x.rates.delivered : '—') + '</td><td class="n">' + x.dropped + '</td></tr>';
    }
    h += '</table>';
    if (hosts.next !== null && hosts.next !== undefined) h += '<p class="hint">First 1000 hosts shown.</p>';
    el.innerHTML = h;
  }

  function select(n) {
    selected = n;
    cy.nodes().unselect();
    cy.getElementById('r' + n).select();
    routerList();
    traceRouter.value = String(n);
    if (last) panel(last, n);
  }

  // ---- Traces ----
  const TRACE_CLASSES = 'trace-faded trace-node trace-transit trace-dest trace-fp trace-missing trace-unreached '
    + 'trace-drop trace-ingress trace-copy trace-unsent trace-fwd trace-rev';
  const traceResult = document.getElementById('trace-result');
  const traceLegend = document.getElementById('trace-legend');
  let traceAnswer = null;   // the answer of the trace drawn, or null: the live view

  function clearTrace() {
    traceAnswer = null;
    cy.elements().removeClass(TRACE_CLASSES);
    cy.elements().removeData('traceLabel traceCopies traceMatching');
    traceResult.innerHTML = '';
    traceLegend.hidden = true;
  }

  function hosts(n) { return n + ' host' + (n === 1 ? '' : 's'); }

  // What each router of the trace did, from the result (the layout of bdrp trace --json).
  function traceModel(r) {
    const dest = new Set(r.destinations), fp = new Set(r.falsePositives), missing = new Set(r.missing);
    const routers = new Map();
    const at = n => {
      if (!routers.has(n)) routers.set(n, { router: n, report: null, role: '', matching: null, copies: [], drops: [] });
      return routers.get(n);
    };
    at(r.ingress).role = 'ingress';
    for (const rep of r.reports) {
      const x = at(rep.router);
      x.report = rep;
      x.matching = rep.local ? rep.matching : null;
      if (rep.router !== r.ingress) x.role = fp.has(rep.router) ? 'false positive' : dest.has(rep.router) ? 'destination' : 'transit';
      x.copies = rep.copies;
      x.drops = rep.drops;
    }
    for (const n of r.missing) { const x = at(n); if (!x.report) x.role = 'no report'; }
    for (const n of r.destinations) { const x = at(n); if (!x.report && !missing.has(n)) x.role = 'not reached'; }
    return Array.from(routers.values()).sort((a, b) => a.router - b.router);
  }

  function drawTrace(answer) {
    clearTrace();
    traceAnswer = answer;
    const r = answer.result;
    const model = traceModel(r);
    cy.batch(() => {
      cy.elements().addClass('trace-faded');
      for (const x of model) {
        const el = cy.getElementById('r' + x.router);
        if (el.empty()) continue;
        el.removeClass('trace-faded').addClass('trace-node');
        let label = String(x.router);
        if (x.role === 'ingress') { el.addClass('trace-ingress'); label += ' ingress'; }
        if (x.role === 'transit') el.addClass('trace-transit');
        if (x.role === 'destination') el.addClass('trace-dest');
        if (x.role === 'false positive') { el.addClass('trace-fp'); label += '\nfalse positive'; }
        if (x.role === 'no report') { el.addClass('trace-missing'); label += '\nno report'; }
        if (x.role === 'not reached') { el.addClass('trace-unreached'); label += '\nnot reached'; }
        if (x.matching !== null) el.data('traceMatching', x.matching);
        if (x.matching !== null && (x.role === 'destination' || x.role === 'ingress' || x.matching > 0)) {
          label += '\n' + hosts(x.matching);
        }
        if (x.drops.length) {
          el.addClass('trace-drop');
          label += '\ndropped: ' + x.drops.map(d => d.reason).join(', ');
        }
        el.data('traceLabel', label);
        for (const c of x.copies) {
          const e = cy.getElementById('l' + edgeId(x.router, c.neighbour));
          if (e.empty()) continue;
          e.removeClass('trace-faded').addClass(c.sent ? 'trace-copy' : 'trace-unsent');
          e.addClass(x.router < c.neighbour ? 'trace-fwd' : 'trace-rev');
          e.data('traceCopies', (e.data('traceCopies') || []).concat([{ from: x.router, to: c.neighbour, sent: c.sent }]));
        }
      }
    });
    // The trace's labels below the routers, in view: fitted once they are drawn (fitting in the
    // same turn as the style change leaves the new labels undrawn).
    requestAnimationFrame(() => cy.fit(undefined, 40));
    traceLegend.hidden = false;
    traceResult.innerHTML = traceText(answer, model);
  }

  function set(a) { return '{' + a.join(', ') + '}'; }

  function traceText(answer, model) {
    const r = answer.result;
    let h = '<p id="trace-summary">Trace ' + esc(r.traceId) + ' from router ' + r.ingress + ' (' + esc(answer.address) + '): '
      + 'D = ' + set(r.destinations) + ', false positives ' + set(r.falsePositives) + ', ' + hosts(r.matchingHosts) + ' matching'
      + (r.complete ? '' : ' — <span class="down">incomplete: routers ' + set(r.missing) + ' did not report</span>') + '</p>';
    h += '<table id="trace-routers"><tr><th>router</th><th>what</th><th class="n">matching</th><th>copies to</th><th>drops</th></tr>';
    for (const x of model) {
      const copies = x.copies.map(c => c.neighbour + (c.routers.length ? ' for ' + set(c.routers) : ' (tree)')
        + (c.sent ? '' : ', not sent') + (c.fastPath ? ', fast path' : '')).join('; ');
      const drops = x.drops.map(d => d.reason + ' ×' + d.count + (d.routers.length ? ' ' + set(d.routers) : '')).join('; ');
      h += '<tr class="trace-router" data-router="' + x.router + '"><td>' + x.router + '</td><td>' + esc(x.role)
        + '</td><td class="n">' + (x.matching === null ? '' : x.matching) + '</td><td>' + esc(copies) + '</td><td class="'
        + (drops ? 'down' : '') + '">' + esc(drops) + '</td></tr>';
    }
    h += '</table><pre id="trace-text">' + esc(answer.text) + '</pre>';
    return h;
  }

  async function runTrace(ev) {
    ev.preventDefault();
    const button = document.getElementById('trace-run');
    button.disabled = true;
    traceResult.innerHTML = '<p class="hint">tracing…</p>';
    const timeout = document.getElementById('trace-timeout').value.trim();
    try {
      const res = await fetch('api/trace', {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          router: traceRouter.value === '' ? null : Number(traceRouter.value),
          message: document.getElementById('trace-message').value,
          timeoutMs: timeout === '' ? null : Number(timeout),
        }),
      });
      let body;
      try { body = await res.json(); } catch (e) { body = { error: 'HTTP ' + res.status + ' without a JSON answer' }; }
      if (!res.ok) throw new Error(body.error || ('HTTP ' + res.status));
      drawTrace(body);
    } catch (e) {
      clearTrace();
      traceResult.innerHTML = '<p id="trace-error">' + esc(e.message) + '</p>';
    } finally {
      button.disabled = false;
    }
  }
  document.getElementById('trace-form').addEventListener('submit', runTrace);
  document.getElementById('trace-clear').addEventListener('click', clearTrace);

  cy.on('tap', 'node', ev => select(ev.target.data('router')));
  scaleSelect.addEventListener('change', () => { if (last) draw(last); });

  async function refresh() {
    const status = document.getElementById('status');
    try {
      const res = await fetch('api/federation', { cache: 'no-store' });
      if (!res.ok) throw new Error('HTTP ' + res.status);
      last = await res.json();
      lastOk = Date.now();
      draw(last);
      const silent = last.routers.filter(r => !r.answering).length;
      status.textContent = cy.nodes().length + ' routers, ' + cy.edges().length + ' links, '
        + cy.edges('.down').length + ' down' + (silent ? ', ' + silent + ' not answering' : '')
        + ' · ' + new Date(last.time).toLocaleTimeString();
      status.classList.remove('stale');
    } catch (e) {
      status.textContent = 'console server unreachable (' + e.message + ')';
      status.classList.add('stale');
    } finally {
      setTimeout(refresh, POLL_MS);
    }
  }

  window.bdrpConsole = {
    cy,
    select,
    // What the graph shows now: routers with whether they answer, links with their state.
    summary() {
      return {
        updated: lastOk,
        routers: cy.nodes().map(n => ({ router: n.data('router'), answering: n.data('answering') === true })),
        links: cy.edges().map(e => ({ id: e.id().substring(1), state: e.data('state'), transport: e.data('transport'),
                                      bytesPerSecond: e.data('bytesPerSecond'), color: e.style('line-color') })),
      };
    },
    // Marks routers and links (as [a, b] pairs), e.g. a traced message's tree of copies.
    highlight(routers, links) {
      cy.elements().removeClass('highlight');
      for (const r of routers || []) cy.getElementById('r' + r).addClass('highlight');
      for (const [a, b] of links || []) cy.getElementById('l' + edgeId(a, b)).addClass('highlight');
    },
    clearHighlight() { cy.elements().removeClass('highlight'); },
    // The trace the graph shows (read from the drawn elements), or null in the live view.
    traceShown() {
      if (traceAnswer === null) return null;
      const routers = cls => cy.nodes('.' + cls).map(n => n.data('router')).sort((a, b) => a - b);
      const all = [].concat(...cy.edges('.trace-copy, .trace-unsent').map(e => e.data('traceCopies')));
      return {
        ingress: routers('trace-ingress'),
        destinations: cy.nodes('.trace-dest, .trace-fp').map(n => ({ router: n.data('router'), matching: n.data('traceMatching') })),
        falsePositives: routers('trace-fp'),
        transit: routers('trace-transit'),
        drops: routers('trace-drop'),
        missing: routers('trace-missing'),
        unreached: routers('trace-unreached'),
        copies: all.filter(c => c.sent).map(c => [c.from, c.to]),
        unsent: all.filter(c => !c.sent).map(c => [c.from, c.to]),
      };
    },
    // Draws a trace answer of POST api/trace ({router, address, result, text}) as the form does.
    showTrace(answer) { drawTrace(answer); },
    clearTrace,
  };
  refresh();
})();
