// Draws the neighbourhood returned by /graph/neighbourhood/<label>/<pk>.json.
// The table under the canvas carries the same information without JavaScript.
(function () {
  const el = document.getElementById("cy");
  if (!el || typeof cytoscape === "undefined") return;
  const colours = { Case: "#1f4e8c", Article: "#9a6700", Offence: "#b3261e", Feature: "#5f6b7a",
                    Community: "#1d7a3e", Interpretation: "#6f42c1", ChecklistItem: "#8c8c8c" };
  fetch(el.dataset.url, { credentials: "same-origin" })
    .then((r) => r.json())
    .then((data) => {
      const elements = data.nodes.map((n) => ({ data: { id: n.id, caption: n.caption, kind: n.label, center: n.center } }))
        .concat(data.edges.map((e) => ({ data: { id: "e" + e.id, source: e.source, target: e.target, label: e.label } })));
      cytoscape({
        container: el,
        elements: elements,
        layout: { name: "cose", animate: false, randomize: false },
        style: [
          { selector: "node", style: { label: "data(caption)", "font-size": 10, "background-color": (n) => colours[n.data("kind")] || "#333", color: "#1d2433" } },
          { selector: "node[?center]", style: { "border-width": 3, "border-color": "#000", width: 36, height: 36 } },
          { selector: "edge", style: { width: 1, "line-color": "#c3c9d2", "target-arrow-shape": "triangle", "target-arrow-color": "#c3c9d2", "curve-style": "bezier", label: "data(label)", "font-size": 7, color: "#5f6b7a" } },
        ],
      });
    });
})();
