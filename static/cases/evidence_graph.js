// Draws the verified subgraph of an evidence view (templates/cases/_evidence.html).
// The elements come from a JSON data block on the page. The layout is deterministic (the same
// graph is drawn the same way on every load): the defendant in the centre, articles and charges
// on the first ring, precedents and interpretations on the outer one. Clicking a node scrolls to
// its evidence on the page, or opens it in the graph explorer. The tables carry the same content.
// The evidence page loads the graph as an htmx fragment once it scrolls into view: draw it then.
(function () {
function draw() {
  const el = document.getElementById("evidence-graph");
  if (!el || el.dataset.drawn || typeof cytoscape === "undefined") return;
  const source = document.getElementById(el.dataset.elements);
  const text = el.dataset.graph || (source && source.textContent);
  if (!text) return;
  const data = JSON.parse(text);
  if (!data.nodes.length) return;
  const ring = { Defendant: 3, Article: 2, Offence: 2, Case: 1, Interpretation: 1 };
  const byCaption = (a, b) => (a.data.kind + a.data.caption).localeCompare(b.data.kind + b.data.caption);
  const cy = cytoscape({
    container: el,
    elements: data.nodes.slice().sort(byCaption).concat(data.edges),
    layout: { name: "concentric", concentric: (n) => ring[n.data("kind")] || 0, levelWidth: () => 1,
              minNodeSpacing: 46, animate: false, padding: 24, startAngle: Math.PI / 2 },
    minZoom: 0.4, maxZoom: 2.5,
    style: [
      { selector: "node", style: { label: "data(caption)", "font-size": 11, color: "#1d2433", "text-valign": "bottom",
        "text-margin-y": 4, "text-wrap": "ellipsis", "text-max-width": 110, "background-color": "data(colour)",
        "text-background-color": "#ffffff", "text-background-opacity": 0.85, "text-background-padding": 1 } },
      { selector: "node[kind = 'Defendant']", style: { width: 38, height: 38, shape: "round-rectangle" } },
      { selector: "edge", style: { width: 1.2, "line-color": "#c3c9d2", "target-arrow-shape": "triangle",
        "target-arrow-color": "#c3c9d2", "curve-style": "bezier", label: "data(caption)", "font-size": 9,
        color: "#5f6b7a", "text-rotation": "autorotate", "text-background-color": "#ffffff",
        "text-background-opacity": 0.9, "text-background-padding": 1 } },
    ],
  });
  el.lextraceGraph = cy;  // for tests and the console: the drawing's positions are deterministic
  el.dataset.drawn = "1";
  // Cytoscape draws on a canvas and has no cursor style: the container shows that a node leads somewhere.
  cy.on("mouseover", "node[anchor], node[url]", () => { el.style.cursor = "pointer"; });
  cy.on("mouseout", "node", () => { el.style.cursor = ""; });
  cy.on("tap", "node", (event) => {
    const anchor = event.target.data("anchor");
    const url = event.target.data("url");
    if (anchor) window.location.hash = anchor;
    else if (url) window.location.href = url;
  });
}
draw();
// htmx:load, not afterSettle: an outerHTML swap detaches the element afterSettle is dispatched on.
document.addEventListener("htmx:load", draw);
})();
