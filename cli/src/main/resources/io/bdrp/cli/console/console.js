// The bdrp console's page: reads /api/federation every second and draws the federation with
// Cytoscape.js: routers as nodes (grey when they do not answer), links as edges (red and dashed
// when down, else coloured by their busier direction's bytes per second against the chosen
// scale, labelled with their DATA transport). Selecting a router shows its panel.
// window.bdrpConsole is the page's interface for tests and overlays (highlight() marks a set of
// routers and links, as a trace of a message's copies will).
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
    if (selected !== null) panel(pic, selected);
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
    if (last) panel(last, n);
  }

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
  };
  refresh();
})();
