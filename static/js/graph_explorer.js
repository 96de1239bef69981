// Draws the neighbourhood returned by /graph/neighbourhood/<label>/<pk>.json.
// Deterministic: the looked-up vertex in the centre, its neighbours on rings by kind, in the
// order the server sorted them, so a reload draws the same picture. Clicking a neighbour opens it
// in the explorer. The table under the canvas carries the same information without JavaScript.
(function () {
  const el = document.getElementById("cy");
  if (!el || typeof cytoscape === "undefined") return;
  const ring = { Article: 4, Offence: 4, Interpretation: 3, ChecklistItem: 3, Case: 2, Community: 2, Feature: 1 };
  fetch(el.dataset.url, { credentials: "same-origin" })
    .then((r) => r.json())
    .then((data) => {
      const elements = data.nodes.map((n) => ({ data: { id: n.id, caption: n.caption, kind: n.label, center: n.center,
                                                        colour: n.colour, url: n.url, title: n.kind_label + " " + n.caption } }))
        .concat(data.edges.map((e) => ({ data: { id: "e" + e.id, source: e.source, target: e.target, caption: e.caption } })));
      const cy = cytoscape({
        container: el,
        elements: elements,
        layout: { name: "concentric", concentric: (n) => (n.data("center") ? 10 : ring[n.data("kind")] || 0),
                  levelWidth: () => 1, minNodeSpacing: 38, animate: false, padding: 20, startAngle: Math.PI / 2 },
        minZoom: 0.3, maxZoom: 2.5,
        style: [
          { selector: "node", style: { label: "data(caption)", "font-size": 10, "background-color": "data(colour)",
            color: "#1d2433", "text-valign": "bottom", "text-margin-y": 3, "text-wrap": "ellipsis", "text-max-width": 96,
            "text-background-color": "#ffffff", "text-background-opacity": 0.85, "text-background-padding": 1 } },
          { selector: "node[?center]", style: { "border-width": 3, "border-color": "#000", width: 36, height: 36 } },
          { selector: "edge", style: { width: 1, "line-color": "#c3c9d2", "target-arrow-shape": "triangle",
            "target-arrow-color": "#c3c9d2", "curve-style": "straight", label: "data(caption)", "font-size": 8,
            color: "#5f6b7a", "text-rotation": "autorotate", "text-background-color": "#ffffff",
            "text-background-opacity": 0.9, "text-background-padding": 1 } },
        ],
      });
      el.lextraceGraph = cy;  // for tests and the console: the drawing's positions are deterministic
      el.dataset.drawn = "1";
      cy.on("mouseover", "node[url]", () => { el.style.cursor = "pointer"; });
      cy.on("mouseout", "node", () => { el.style.cursor = ""; });
      cy.on("tap", "node", (event) => {
        const url = event.target.data("url");
        if (url) window.location.href = url;
      });
    });
})();
