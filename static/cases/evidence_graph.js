// Draws the verified subgraph of an evidence view (templates/cases/_evidence.html).
// The elements come from a JSON data block on the page; clicking a node with an
// anchor scrolls to its evidence on the page. The tables carry the same content.
(function () {
  const el = document.getElementById("evidence-graph");
  if (!el || typeof cytoscape === "undefined") return;
  const source = document.getElementById(el.dataset.elements);
  if (!source) return;
  const data = JSON.parse(source.textContent);
  if (!data.nodes.length) return;
  const colours = { Defendant: "#1d2433", Article: "#9a6700", Offence: "#b3261e", Case: "#1f4e8c",
                    Interpretation: "#6f42c1" };
  const cy = cytoscape({
    container: el,
    elements: data.nodes.concat(data.edges),
    layout: { name: "cose", animate: false, randomize: false, nodeRepulsion: () => 40000, idealEdgeLength: () => 90, padding: 20 },
    style: [
      { selector: "node", style: { label: "data(caption)", "font-size": 11, color: "#1d2433",
        "text-valign": "bottom", "text-margin-y": 4,
        "background-color": (n) => colours[n.data("kind")] || "#5f6b7a" } },
      { selector: "node[kind = 'Defendant']", style: { width: 38, height: 38, shape: "round-rectangle" } },
      { selector: "edge", style: { width: 1.2, "line-color": "#c3c9d2", "target-arrow-shape": "triangle",
        "target-arrow-color": "#c3c9d2", "curve-style": "bezier", label: "data(label)", "font-size": 7,
        color: "#8a94a3", "text-rotation": "autorotate" } },
    ],
  });
  cy.on("tap", "node", (event) => {
    const anchor = event.target.data("anchor");
    if (anchor) window.location.hash = anchor;
  });
})();
